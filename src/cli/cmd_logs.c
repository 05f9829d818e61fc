/* cmd_logs: `vram logs MODEL [-f] [-n N]`: what a model of vram serve wrote
 * (its server's stdout and stderr, the file the daemon keeps in its logs
 * folder), its last lines, and with -f what it writes next, as ollama's
 * and docker's users read theirs. The text is the model's: on a terminal
 * each line goes through core/textsafe, so that none of its bytes is
 * taken by the terminal as a command; into a pipe or a file it goes as it
 * is. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/client.h"
#include "cli/cmd.h"
#include "core/textsafe.h"
#include "http/sse.h"

#define LINE_MAX_KEPT 8192 /* a longer line is printed in parts */
#define ERR_MAX       4096

struct logs_opts {
    bool follow;
    unsigned lines;
    const char *socket;
};

static int cmd_logs(const void *opts, int argc, char **argv);

#define O struct logs_opts
static const struct cmd_opt logs_opts[] = {
    {"follow", 'f', CMD_FLAG(O, follow),
     .help = "go on: print what the model writes next, until Ctrl-C (or the daemon stops)"},
    {"lines", 'n', CMD_NUMBER(O, lines, 0, 1000), .arg = "N",
     .help = "how many of its last lines first (default 100, at most 1000)"},
    CMD_SOCKET_OPT(O, "the daemon's socket (default $VRAM_SOCKET, else a user daemon's in "
                      "$XDG_RUNTIME_DIR/vram, else /run/vram/vram.sock)"),
    {NULL},
};
#undef O

const struct cmd_entry cmd_logs_entry = {
    .name = "logs",
    .args = "MODEL [-f] [-n N] [--socket PATH]",
    .summary = "what a model of vram serve wrote: its last lines, and with -f what comes next",
    .opts = logs_opts,
    .help = "A model's log is its server's standard output and error, kept by vram\n"
            "serve in its logs folder (one file per model, from its first start).\n"
            "\n"
            "  vram logs qwen2.5:7b          the last 100 lines\n"
            "  vram logs qwen2.5:7b -f -n 0  only what it writes from now on\n"
            "\n"
            "The dashboard (vram ui) shows the same; GET /vram/v1/models/NAME/log on the\n"
            "proxy's address gives it to other programs.\n",
    .size = sizeof(struct logs_opts),
    .defaults = &(const struct logs_opts){.lines = 100},
    .max_operands = 1,
    .exec = cmd_logs,
};

struct reader {
    bool tty, follow, any;
    long status;
    struct sse sse;
    char line[LINE_MAX_KEPT + 1]; /* a line not ended yet (on a terminal) */
    size_t nline;
    char err[ERR_MAX + 1]; /* an answer other than 200: its body */
    size_t nerr;
};

/* One whole line of the model's, made safe for a terminal. */
static void put_line(const char *p, size_t n)
{
    char in[LINE_MAX_KEPT + 1], out[LINE_MAX_KEPT + 1];
    if (n > LINE_MAX_KEPT)
        n = LINE_MAX_KEPT;
    for (size_t i = 0; i < n; i++) /* a tab is a blank, not a control */
        in[i] = p[i] == '\t' ? ' ' : p[i] ? p[i] : '?';
    in[n] = '\0';
    printf("%s\n", textsafe_copy(in, n, out, sizeof out));
}

/* Text of the log: as it is into a pipe, a line at a time on a terminal. */
static void put_text(struct reader *r, const char *p, size_t n)
{
    r->any = true;
    if (!r->tty) {
        fwrite(p, 1, n, stdout);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n' || r->nline == LINE_MAX_KEPT) {
            put_line(r->line, r->nline);
            r->nline = 0;
            if (p[i] == '\n')
                continue;
        }
        r->line[r->nline++] = p[i];
    }
}

/* One event of a followed log: its lines. */
static void on_event(void *arg, const char *data, size_t len)
{
    struct reader *r = arg;
    put_text(r, data, len);
    put_text(r, "\n", 1);
    fflush(stdout);
}

static int on_part(void *arg, long status, const char *data, size_t n)
{
    struct reader *r = arg;
    r->status = status;
    if (status != 200) {
        size_t take = ERR_MAX - r->nerr < n ? ERR_MAX - r->nerr : n;
        memcpy(r->err + r->nerr, data, take);
        r->err[r->nerr += take] = '\0';
    } else if (r->follow) {
        sse_feed(&r->sse, data, n, on_event, r);
    } else {
        put_text(r, data, n);
    }
    return 0;
}

/* The daemon's words for an answer other than 200 (JSON {"error": ...}),
 * safe to print. */
static const char *error_of(const struct reader *r, char *out, size_t len)
{
    const char *e = strstr(r->err, "\"error\":\"");
    const char *from = e ? e + 9 : r->err;
    size_t n = e ? strcspn(from, "\"") : strcspn(from, "\n");
    return textsafe_copy(from, n, out, len);
}

static int cmd_logs(const void *opts, int argc, char **argv)
{
    const struct logs_opts *o = opts;
    if (argc < 1)
        return cmd_bad_usage(&cmd_logs_entry, "which model? (vram ps lists them)");
    char path[600], err[600];
    if (client_model_path(argv[0], "log", path, sizeof path, err, sizeof err) < 0)
        return cmd_bad_usage(&cmd_logs_entry, "%s", err);
    snprintf(path + strlen(path), sizeof path - strlen(path), "?lines=%u%s", o->lines,
             o->follow ? "&follow=1" : "");
    struct reader *r = calloc(1, sizeof *r);
    if (!r)
        return 1;
    r->tty = isatty(STDOUT_FILENO);
    r->follow = o->follow;
    sse_init(&r->sse, false);
    long st = client_stream(client_socket(o->socket), path, on_part, r, err, sizeof err);
    if (r->nline)
        put_line(r->line, r->nline);
    fflush(stdout);
    int rc = 0;
    char safe[600];
    if (r->status && r->status != 200) {
        fprintf(stderr, "vram logs: %s\n", error_of(r, safe, sizeof safe));
        rc = r->status == 404 || r->status == 400 ? 2 : 1;
    } else if (st < 0 && r->status == 200 && r->follow) {
        fprintf(stderr, "vram logs: vram serve ended the log (did it stop?)\n");
        rc = 1;
    } else if (st < 0) {
        fprintf(stderr, "vram logs: %s\n", err);
        rc = 1;
    }
    sse_free(&r->sse);
    free(r);
    return rc;
}
