/* The table of vram.conf's settings (conf/settings.h): each row's default
 * is a value the file could say, and the file that says nothing gets it;
 * vram.conf(5) has an entry for every row, and a row for every entry,
 * naming the row's default; a reload copies what it may and names the
 * rest; messages name the file, the line, the value and the fix. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/config.h"
#include "conf/settings.h"

#ifndef SRC_ROOT
#define SRC_ROOT "."
#endif

static struct config *parse(const char *text, char *err, size_t len)
{
    struct config *c = calloc(1, sizeof *c);
    assert_non_null(c);
    err[0] = '\0';
    if (config_parse(text, "t.conf", c, err, len) < 0) {
        free(c);
        return NULL;
    }
    return c;
}

static const char *const MINIMAL = "[serve]\nsocket = /tmp/t.sock\n\n[model m]\ncommand = true\n"
                                   "vram = 1G\n";

static void rows_are_whole(void **st)
{
    (void)st;
    assert_true(settings_nrows <= SETTINGS_MAX_ROWS);
    for (size_t i = 0; i < settings_nrows; i++) {
        const struct settings_row *r = &settings_rows[i];
        /* a row's own parse, or a type's, which names what a good value is */
        if (r->type == SETTINGS_OTHER)
            assert_non_null(r->parse);
        else
            assert_non_null(r->want);
        assert_true(r->size > 0);
        assert_true(r->section == SETTINGS_SERVE ? r->at + r->size <= sizeof(struct config)
                                                 : r->at + r->size <= sizeof(struct config_model));
        assert_true(r->section == SETTINGS_SERVE
                        ? r->reload == SETTINGS_LIVE || r->reload == SETTINGS_RESTART
                        : r->reload != SETTINGS_RESTART);
        assert_ptr_equal(settings_find(r->section, r->name),
                         r->old ? settings_find(r->section, r->name) : r);
        if (!r->def)
            continue;
        struct config c;
        struct config_model m;
        memset(&c, 0, sizeof c);
        memset(&m, 0, sizeof m);
        struct settings_ctx x = {.c = &c, .m = &m};
        const char *why = settings_set(r, &x, r->def);
        if (why)
            fail_msg("%s's default '%s' is refused: %s", r->name, r->def, why);
    }
}

static void defaults_reach_the_configuration(void **st)
{
    (void)st;
    char err[512];
    struct config *c = parse(MINIMAL, err, sizeof err);
    if (!c)
        fail_msg("%s", err);
    assert_int_equal(c->max_body, 16ULL << 20);
    assert_int_equal(c->margin, 512ULL << 20);
    assert_true(c->wait_s == 300 && c->client_timeout_s == 60 && c->preempt_gap_s == 1);
    assert_int_equal(c->port_base, 21000);
    assert_int_equal(c->max_queue, 512);
    assert_true(c->overlap && c->min_resident_auto);
    assert_true(c->keep_alive_s == 300);
    const struct config_model *m = &c->models[0];
    assert_int_equal(m->priority, 5);
    assert_true(m->slice_s == 5 && m->start_timeout_s == 120 && m->stop_timeout_s == 10);
    assert_true(m->fast && !m->cap && !m->pinned);
    assert_string_equal(m->health, "/health");
    assert_int_equal(m->width, 1);
    assert_int_equal(m->gpus, 0);
    assert_int_equal(m->evict, SCHED_EVICT_SUSPEND);
    assert_int_equal(m->preempt, -1);
    free(c);
}

static void messages_name_line_value_and_fix(void **st)
{
    (void)st;
    char err[512];
    assert_null(parse("[serve]\nsocket = /tmp/t.sock\n\nmax_body = 1\n", err, sizeof err));
    assert_string_equal(err, "t.conf:4: max_body '1': a size from 1K to 16G, like 16M");
    assert_null(parse("[serve]\nsocket = /tmp/t.sock\nlisten = 127.0.0.1:1\n\n[model m]\n"
                      "command = true\nvram = 1G\npriority = 101\n",
                      err, sizeof err));
    assert_string_equal(err, "t.conf:8: priority '101': a number from 0 to 100");
    assert_null(parse("[serve]\nsocket = /tmp/t.sock\nwidth = 3\n", err, sizeof err));
    assert_non_null(strstr(err, "t.conf:3: unknown setting 'width' in [serve] (socket, state"));
    assert_null(strstr(err, "idle")); /* an old name is read, not offered */
}

/* vram status and top read only the state a configuration names: the
 * same path as a whole load, or a daemon's models go unnamed. */
static void the_state_read_alone_is_the_loaded_one(void **st)
{
    (void)st;
    static const char *const texts[] = {
        "[serve]\nsocket = /tmp/t.sock\nstate = /srv/vram/state.db\n\n[model m]\n"
        "command = true\nvram = 1G\n",
        "[model m]\ncommand = true\nvram = 1G\nstate_note = x\n\n[serve]\n"
        "state = /var/tmp/a b.db ; said after a model\n",
        "[serve]\nsocket = /tmp/t.sock\n\n[model a-name-longer-than-inih-keeps-for-a-section"
        "-which-is-fifty]\ncommand = true\nvram = 1G\n",
        MINIMAL,
        /* a value that goes on over an indented line: inih says it again */
        "[serve]\nsocket = /tmp/t.sock\nstate = /srv/a.db\n  /srv/b.db\n\n[model m]\n"
        "command = true\nvram = 1G\n",
        "[serve]\nsocket = /tmp/t.sock\nstate =\n  /srv/b.db\n\n[model m]\ncommand = true\n"
        "vram = 1G\n",
    };
    char path[] = "/tmp/vram-test-state-XXXXXX", err[512], alone[CONFIG_PATH_MAX];
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, texts[i], strlen(texts[i])), (ssize_t)strlen(texts[i]));
        close(fd);
        struct config *c = calloc(1, sizeof *c);
        assert_non_null(c);
        int loaded = config_load(path, c, err, sizeof err);
        assert_int_equal(config_state_of(path, alone, sizeof alone), 0);
        if (loaded == 0)
            assert_string_equal(alone, c->state);
        else /* a file the daemon refuses still names its state */
            assert_string_equal(alone, "/var/tmp/a b.db");
        free(c);
        unlink(path);
        strcpy(path, "/tmp/vram-test-state-XXXXXX");
    }
    assert_int_equal(config_state_of("/nonexistent/vram.conf", alone, sizeof alone), -1);
    assert_string_equal(alone, "");
}

/* What a reload may apply is copied; the rest is named, not applied. */
static void reload_applies_what_it_may(void **st)
{
    (void)st;
    char err[512], restart[256];
    struct config *run = parse(MINIMAL, err, sizeof err);
    struct config *next = parse("[serve]\nsocket = /tmp/t.sock\nlisten = 127.0.0.1:9\n"
                                "max_body = 1M\nwait = 7s\ntoken = abc\nmax_loaded = 3\n\n"
                                "[model m]\ncommand = true\nvram = 1G\n",
                                err, sizeof err);
    assert_non_null(run);
    assert_non_null(next);
    settings_reload(run, next, restart, sizeof restart);
    assert_string_equal(restart, "listen, max_body");
    assert_string_equal(run->listen, ""); /* kept until a restart */
    assert_int_equal(run->max_body, 16ULL << 20);
    assert_true(run->wait_s == 7); /* applied */
    assert_string_equal(run->token, "abc");
    assert_int_equal(run->keys.n, 1);
    assert_int_equal(run->max_loaded, 3);
    settings_reload(run, next, restart, sizeof restart);
    assert_string_equal(restart, "listen, max_body"); /* still waiting */
    free(next);
    next = parse("[serve]\nsocket = /tmp/t.sock\n\n[model m]\ncommand = false\nvram = 1G\n"
                 "cap = yes\ngpu = 1\npriority = 9\n",
                 err, sizeof err);
    assert_non_null(next);
    char names[256];
    assert_true(settings_model_differs(&run->models[0], &next->models[0], SETTINGS_RESTARTS, names,
                                       sizeof names));
    assert_string_equal(names, "command, gpus");
    assert_true(settings_model_differs(&run->models[0], &next->models[0], SETTINGS_STARTS, names,
                                       sizeof names));
    assert_string_equal(names, "cap");
    free(next);
    free(run);
}

/* ---- vram.conf(5) against the rows ---- */

static char *man_page(void)
{
    FILE *f = fopen(SRC_ROOT "/docs/man/vram.conf.5.scd", "r");
    assert_non_null(f);
    static char buf[1 << 17];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* The text of section ("# [serve]") up to the next "# " heading. */
static void section_text(const char *page, const char *heading, const char **from, const char **to)
{
    const char *s = strstr(page, heading);
    assert_non_null(s);
    const char *e = strstr(s + 1, "\n# ");
    *from = s;
    *to = e ? e : s + strlen(s);
}

/* name as scdoc wants it written: '_' escaped */
static void escaped(const char *name, char *out, size_t len)
{
    size_t k = 0;
    for (; *name && k + 2 < len; name++) {
        if (*name == '_')
            out[k++] = '\\';
        out[k++] = *name;
    }
    out[k] = '\0';
}

/* Where "*NAME* =" starts an entry (at a line's start, or after ", "
 * on it), or NULL. */
static const char *entry(const char *from, const char *to, const char *name)
{
    char e[80], pat[96];
    escaped(name, e, sizeof e);
    snprintf(pat, sizeof pat, "*%s* =", e);
    for (const char *p = strstr(from, pat); p && p < to; p = strstr(p + 1, pat))
        if (p[-1] == '\n' || (p - from >= 2 && !strncmp(p - 2, ", ", 2)))
            return p;
    return NULL;
}

/* Whether word is in [from, to) as a word (not inside another). */
static bool has_word(const char *from, const char *to, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(from, word); p && p + n <= to; p = strstr(p + 1, word))
        if (!isalnum((unsigned char)p[-1]) && !isalnum((unsigned char)p[n]))
            return true;
    return false;
}

/* Whether the line after the newline at p starts an entry ("*NAME* ="). */
static bool starts_entry(const char *p)
{
    const char *eol = strchr(p + 1, '\n'), *eq = strstr(p + 1, "* =");
    return p[1] == '*' && eq && (!eol || eq < eol);
}

/* An entry's end: the next line that starts one, or the section's end. */
static const char *entry_end(const char *at, const char *to)
{
    for (const char *p = strchr(at, '\n'); p && p < to; p = strchr(p + 1, '\n'))
        if (starts_entry(p))
            return p;
    return to;
}

#define ADD(buf, ...) snprintf(buf + strlen(buf), sizeof buf - strlen(buf), __VA_ARGS__)

static void the_man_page_has_every_row(void **st)
{
    (void)st;
    const char *page = man_page();
    const char *sections[2][2];
    section_text(page, "\n# [serve]", &sections[0][0], &sections[0][1]);
    section_text(page, "\n# [model NAME]", &sections[1][0], &sections[1][1]);
    char missing[1024] = "", nodefault[1024] = "", unread[1024] = "";
    for (size_t i = 0; i < settings_nrows; i++) {
        const struct settings_row *r = &settings_rows[i];
        if (r->old)
            continue;
        const char *to = sections[r->section][1];
        const char *at = entry(sections[r->section][0], to, r->name);
        if (!at) {
            ADD(missing, " %s", r->name);
            continue;
        }
        const char *end = entry_end(at, to);
        if (r->def && ((!has_word(at, end, "default") && !has_word(at, end, "Default")) ||
                       !has_word(at, end, r->def)))
            ADD(nodefault, " %s (%s)", r->name, r->def);
    }
    /* and every entry is a row: none that the daemon would refuse */
    for (int s = 0; s < 2; s++)
        for (const char *p = strchr(sections[s][0], '\n'); p && p < sections[s][1];
             p = strchr(p + 1, '\n')) {
            if (!starts_entry(p))
                continue;
            const char *eol = strchr(p + 1, '\n');
            for (const char *q = p + 1; q && q < eol;) { /* "*a* = X, *b* = Y" */
                char name[64];
                size_t k = 0;
                for (const char *c = q + 1; *c && *c != '*' && k + 1 < sizeof name; c++)
                    if (*c != '\\')
                        name[k++] = *c;
                name[k] = '\0';
                if (!settings_find((enum settings_section)s, name))
                    ADD(unread, " %s", name);
                q = strstr(q + 1, ", *");
                q = q && q < eol ? q + 2 : NULL;
            }
        }
    if (missing[0])
        fail_msg("vram.conf(5) has no entry for:%s", missing);
    if (nodefault[0])
        fail_msg("vram.conf(5) does not say the default of:%s", nodefault);
    if (unread[0])
        fail_msg("vram.conf(5) has entries no row reads:%s", unread);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_are_whole),
        cmocka_unit_test(defaults_reach_the_configuration),
        cmocka_unit_test(messages_name_line_value_and_fix),
        cmocka_unit_test(reload_applies_what_it_may),
        cmocka_unit_test(the_state_read_alone_is_the_loaded_one),
        cmocka_unit_test(the_man_page_has_every_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
