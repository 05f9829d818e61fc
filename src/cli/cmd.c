/* cmd: what every command shares, on Linux (cli/main.c's table) and on
 * Windows (win/winmain.c's): the front (the options before the command,
 * the command found), parsing the options its entry declares (getopt_long,
 * built from the entry) into its struct, its usage and --help written from
 * the same declarations, a bad usage's message and exit code. */
#include "cli/cmd.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#include "cli/color.h"
#include "core/err.h"
#include "core/units.h"

#define MAX_OPTS 48
#define HELP_WIDTH 79 /* as the hand-wrapped help: 80 columns less the cursor's */
#define HELP_COLUMN_MAX 26

const struct cmd_entry *cmd_find(const char *name)
{
    for (size_t k = 0; k < cmd_count; k++)
        if (!strcmp(name, cmd_table[k]->name))
            return cmd_table[k];
    return NULL;
}

int cmd_bad_usage(const struct cmd_entry *e, const char *fmt, ...)
{
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "vram %s: ", e->name);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    fprintf(stderr, "usage: vram %s %s\n(vram %s --help for details)\n", e->name, e->args, e->name);
    return err_exit_code(VRAM_EINPUT);
}

/* ---- values ---- */

/* What a refused value of o is told when its entry does not say. */
static const char *default_fix(const struct cmd_opt *o, char *buf, size_t len)
{
    switch (o->kind) {
    case CMD_OPT_SECONDS:
        snprintf(buf, len, "give a duration from %gs to %gs, such as 30s, 500ms or 10m", o->lo,
                 o->hi);
        break;
    case CMD_OPT_NUMBER:
        snprintf(buf, len, "give a whole number from %.0f to %.0f", o->lo, o->hi);
        break;
    case CMD_OPT_SIZE:
        snprintf(buf, len, "give a size such as 16G or 512M");
        break;
    case CMD_OPT_TOKENS:
        snprintf(buf, len, "a count of tokens from %.0f to %.0f, like 8192 or 128k (k = 1024)",
                 o->lo, o->hi);
        break;
    case CMD_OPT_COLOR:
        snprintf(buf, len, "auto, always or never");
        break;
    case CMD_OPT_CHOICE: { /* "a, b or c" */
        size_t n = 0, at = 0;
        while (o->words[n].word)
            n++;
        buf[0] = '\0';
        for (size_t i = 0; i < n && at < len; i++)
            at += (size_t)snprintf(buf + at, len - at, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : " or ",
                                   o->words[i].word);
        break;
    }
    default:
        snprintf(buf, len, "see --help");
        break;
    }
    return buf;
}

/* A whole number into an int, unsigned, long or uint64_t field. */
static int put_number(const struct cmd_opt *o, const char *arg, char *field)
{
    char *end;
    long long v = strtoll(arg, &end, 10);
    if (end == arg || *end || (double)v < o->lo || (double)v > o->hi)
        return -1;
    if (o->size == sizeof(int)) {
        int i = (int)v;
        memcpy(field, &i, sizeof i);
    } else {
        memcpy(field, &v, sizeof v);
    }
    return 0;
}

static int put_value(const struct cmd_opt *o, const char *arg, char *field)
{
    switch (o->kind) {
    case CMD_OPT_FLAG:
        *(bool *)field = true;
        return 0;
    case CMD_OPT_STRING:
        *(const char **)field = arg;
        return 0;
    case CMD_OPT_SECONDS: {
        double s;
        if (units_parse_seconds(arg, &s) < 0 || s < o->lo || s > o->hi)
            return -1;
        *(double *)field = s;
        return 0;
    }
    case CMD_OPT_NUMBER:
        return put_number(o, arg, field);
    case CMD_OPT_SIZE:
    case CMD_OPT_TOKENS: {
        uint64_t v;
        int rc = o->kind == CMD_OPT_SIZE ? units_parse_size(arg, &v) : units_parse_tokens(arg, &v);
        if (rc < 0 || (double)v < o->lo || (o->kind == CMD_OPT_TOKENS && (double)v > o->hi))
            return -1;
        *(uint64_t *)field = v;
        return 0;
    }
    case CMD_OPT_CHOICE:
        for (const struct cmd_word *w = o->words; w->word; w++)
            if (!strcmp(arg, w->word)) {
                *(int *)field = w->value;
                return 0;
            }
        return -1;
    case CMD_OPT_COLOR: {
        enum color_when w;
        if (color_parse(arg, &w) < 0)
            return -1;
        color_choose(w);
        return 0;
    }
    case CMD_OPT_CUSTOM:
        return o->parse(arg, field);
    }
    return -1;
}

/* ---- parsing ---- */

static size_t count_opts(const struct cmd_entry *e)
{
    size_t n = 0;
    while (e->opts && e->opts[n].name)
        n++;
    return n;
}

/* getopt_long's tables from the entry: a short option returns its letter,
 * a long-only one 256 + its index. */
static void getopt_tables(const struct cmd_entry *e, struct option *lo, char *shorts)
{
    size_t n = count_opts(e), k = 0;
    if (e->in_order)
        shorts[k++] = '+';
    for (size_t i = 0; i < n; i++) {
        const struct cmd_opt *o = &e->opts[i];
        bool arg = o->kind != CMD_OPT_FLAG;
        lo[i] = (struct option){o->name, arg ? required_argument : no_argument, NULL,
                                o->key ? o->key : 256 + (int)i};
        if (o->key) {
            shorts[k++] = o->key;
            if (arg)
                shorts[k++] = ':';
        }
    }
    lo[n] = (struct option){"help", no_argument, NULL, 'h'};
    lo[n + 1] = (struct option){NULL, 0, NULL, 0};
    shorts[k++] = 'h';
    shorts[k] = '\0';
}

static const struct cmd_opt *opt_of(const struct cmd_entry *e, int c)
{
    size_t n = count_opts(e);
    if (c >= 256 && (size_t)(c - 256) < n)
        return &e->opts[c - 256];
    for (size_t i = 0; i < n; i++)
        if (e->opts[i].key == c)
            return &e->opts[i];
    return NULL;
}

/* 0 parsed (*first: the first operand), 1 --help printed, else the exit
 * code of a bad usage. */
static int parse(const struct cmd_entry *e, int argc, char **argv, char *args, int *first)
{
    struct option lo[MAX_OPTS + 2];
    char shorts[3 * MAX_OPTS + 4];
    if (count_opts(e) > MAX_OPTS) {
        fprintf(stderr, "vram %s: too many options declared\n", e->name);
        return 1;
    }
    getopt_tables(e, lo, shorts);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        if (c == 'h') {
            cmd_usage(e, 0);
            return 1;
        }
        const struct cmd_opt *o = opt_of(e, c);
        if (!o)
            return cmd_bad_usage(e, NULL); /* getopt said what was wrong */
        if (put_value(o, optarg, args + o->at) < 0) {
            char fix[256];
            return cmd_bad_usage(e, "--%s '%s': %s", o->name, optarg,
                                 o->fix ? o->fix : default_fix(o, fix, sizeof fix));
        }
    }
    if (e->max_operands >= 0 && argc - optind > e->max_operands)
        return cmd_bad_usage(e, "unexpected argument '%s'", argv[optind + e->max_operands]);
    *first = optind;
    return 0;
}

/* The end of a process whose command is done: what exit() does that
 * matters here (stdio flushed, the leak check of a sanitizer build), but
 * no library's destructor. */
static void quick_end(int code)
{
    fflush(NULL);
#ifdef __SANITIZE_ADDRESS__
    __lsan_do_leak_check();
#endif
    _Exit(code);
}

int cmd_exec(const struct cmd_entry *e, int argc, char **argv)
{
    /* getopt names the program by argv[0] in its messages
     * ("vram status: unrecognized option '--x'") */
    char prog[64];
    snprintf(prog, sizeof prog, "vram %s", e->name);
    argv[0] = prog;
    char *args = calloc(1, e->size ? e->size : 1);
    if (!args) {
        fprintf(stderr, "vram %s: out of memory\n", e->name);
        return 1;
    }
    if (e->defaults)
        memcpy(args, e->defaults, e->size);
    int first = 1, rc = parse(e, argc, argv, args, &first);
    if (rc == 0)
        rc = e->exec(args, argc - first, argv + first);
    else if (rc == 1)
        rc = 0; /* --help */
    free(args);
    if (e->quick_end)
        quick_end(rc);
    return rc;
}

/* ---- help ---- */

/* text from column col on, wrapped at HELP_WIDTH, its next lines indented
 * to indent. */
static void wrap(FILE *out, const char *text, size_t col, size_t indent)
{
    const char *p = text;
    bool line_empty = true;
    while (*p) {
        size_t n = strcspn(p, " \n");
        if (!line_empty && col + 1 + n > HELP_WIDTH) {
            fprintf(out, "\n%*s", (int)indent, "");
            col = indent;
            line_empty = true;
        }
        if (!line_empty) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, n, out);
        col += n;
        line_empty = false;
        p += n;
        if (*p == '\n') {
            fprintf(out, "\n%*s", (int)indent, "");
            col = indent;
            line_empty = true;
        }
        while (*p == ' ' || *p == '\n')
            p++;
    }
    fputc('\n', out);
}

/* "  -j, --json", "      --proc-root DIR" */
static int opt_label(const struct cmd_opt *o, char *buf, size_t len)
{
    char key[8] = "    ";
    if (o->key)
        snprintf(key, sizeof key, "-%c, ", o->key);
    return snprintf(buf, len, "  %s--%s%s%s", key, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

static void print_opts(FILE *out, const struct cmd_entry *e)
{
    size_t n = count_opts(e), column = 0;
    char label[96];
    for (size_t i = 0; i < n; i++) {
        size_t w = (size_t)opt_label(&e->opts[i], label, sizeof label) + 2;
        if (e->opts[i].help && w > column && w <= HELP_COLUMN_MAX)
            column = w;
    }
    for (size_t i = 0; i < n; i++) {
        if (!e->opts[i].help)
            continue;
        size_t w = (size_t)opt_label(&e->opts[i], label, sizeof label);
        if (w + 2 > column)
            fprintf(out, "%s\n%*s", label, (int)column, "");
        else
            fprintf(out, "%-*s", (int)column, label);
        wrap(out, e->opts[i].help, column, column);
    }
}

void cmd_usage(const struct cmd_entry *e, int to_stderr)
{
    FILE *out = to_stderr ? stderr : stdout;
    fprintf(out, "usage: vram %s %s\n%s\n", e->name, e->args, e->summary);
    if (to_stderr)
        return;
    bool opts = count_opts(e) > 0;
    if (e->intro)
        fprintf(out, "\n%s", e->intro);
    if (opts) {
        fputc('\n', out);
        print_opts(out, e);
    }
    if (e->help)
        fprintf(out, "\n%s", e->help);
}

#ifndef VRAM_VERSION
#define VRAM_VERSION "0.1.0"
#endif

void cmd_list(FILE *out)
{
    for (size_t i = 0; i < cmd_count; i++)
        if (!cmd_table[i]->hidden)
            fprintf(out, "  %-10s %s\n", cmd_table[i]->name, cmd_table[i]->summary);
}

/* The options every vram takes before its command, at argv[*i]: -1 to go
 * on, else the exit code. */
static int front_option(int argc, char **argv, int *i, const struct cmd_front *f)
{
    const char *a = argv[*i];
    if (f->option && f->option(argc, argv, i))
        return -1;
    if (!strcmp(a, "--color") || !strncmp(a, "--color=", 8)) {
        const char *when = a[7] == '=' ? a + 8 : *i + 1 < argc ? argv[++*i] : "";
        enum color_when w;
        if (color_parse(when, &w) < 0) {
            fprintf(stderr, "vram: --color '%s': auto, always or never\n", when);
            return 2;
        }
        color_choose(w);
        return -1;
    }
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
        f->usage(stdout);
        return 0;
    }
    if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
        printf("vram %s\n", VRAM_VERSION);
        return 0;
    }
    fprintf(stderr, "vram: unknown option '%s'\n", a);
    f->usage(stderr);
    return 2;
}

int cmd_front(int argc, char **argv, const struct cmd_front *f)
{
    int i = 1, rc;
    for (; i < argc && argv[i][0] == '-'; i++)
        if ((rc = front_option(argc, argv, &i, f)) >= 0)
            return rc;
    if (i >= argc) {
        f->usage(stderr);
        return 2;
    }
    if (f->ready && (rc = f->ready(argv)) != 0)
        return rc;
    const struct cmd_entry *e = cmd_find(argv[i]);
    if (e)
        return cmd_exec(e, argc - i, argv + i);
    const char *hint = f->hint ? f->hint(argv[i]) : NULL;
    if (hint) { /* what they meant, not the whole list */
        fprintf(stderr, "vram: %s\n(vram --help lists the commands)\n", hint);
        return 2;
    }
    fprintf(stderr, "vram: unknown command '%s'\n", argv[i]);
    f->usage(stderr);
    return 2;
}
