/* lswrite: vram.conf from llama-swap's configuration.
 *
 * Every value is written so that inih reads it back as it is: no line
 * longer than it takes (a command or a list goes on over indented lines,
 * broken at single spaces only, never before a word that would read as a
 * comment), no blank before a ';' (inih's inline comment), no control
 * character. A model that cannot be written so, or that vram cannot serve
 * as llama-swap did (a proxy elsewhere than its port), is written as
 * comments with the reason. */
#include "cli/lswrite.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/lscmd.h"
#include "core/modelname.h"
#include "core/textsafe.h"
#include "conf/config.h"

#define LINE   150 /* where a line is broken; inih reads 198 */
#define LONGEST 190

struct w {
    const struct lsconf *c;
    const struct lswrite_opts *o;
    FILE *out, *notes;
    const char *model; /* the model being written, for the notes */
};

/* text as comment lines, broken near 96 columns. */
static void comment(FILE *out, const char *prefix, const char *text)
{
    size_t n = strlen(text), at = 0;
    bool first = true;
    while (at < n || first) {
        size_t take = n - at;
        if (take > 96) {
            take = 96;
            while (take > 40 && text[at + take] != ' ')
                take--;
            if (text[at + take] != ' ')
                take = 96;
        }
        fprintf(out, "; %s%.*s\n", first ? prefix : "  ", (int)take, text + at);
        at += take;
        while (at < n && text[at] == ' ')
            at++;
        first = false;
    }
}

/* What has no equivalent: a comment where it is, and a note. */
static void say(struct w *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct w *w, const char *fmt, ...)
{
    char buf[600], clean[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* the file's words (a model's ID, its cmd) may hold a terminal's
     * commands: none reaches the file's comments or the terminal */
    textsafe_copy(buf, sizeof buf, clean, sizeof clean);
    comment(w->out, "", clean);
    char id[200];
    if (w->model)
        textsafe_copy(w->model, strlen(w->model), id, sizeof id);
    if (w->notes)
        fprintf(w->notes, "vram import: %s: %s%s%s%s\n", w->o->source, w->model ? "models." : "",
                w->model ? id : "", w->model ? ": " : "", clean);
}

/* Why v cannot be an INI value as it is; NULL when it can. */
static const char *unsafe(const char *v)
{
    if (*v == ';' || *v == '#')
        return "it begins as an INI comment does";
    for (const char *p = v; *p; p++) {
        if ((unsigned char)*p < 0x20 && *p != '\t')
            return "a control character in it";
        if (*p == 0x7f)
            return "a control character in it";
        if ((*p == ' ' || *p == '\t') && p[1] == ';')
            return "a blank before ';' (the INI reader takes the rest for a comment)";
    }
    return NULL;
}

/* A place v may be broken at: a single space, before a word that does
 * not begin as a comment does. */
static bool breakable(const char *v, size_t n, size_t e)
{
    return v[e] == ' ' && e > 0 && v[e - 1] != ' ' && e + 1 < n && v[e + 1] != ' ' &&
           v[e + 1] != ';' && v[e + 1] != '#';
}

/* v after "key = ", on lines of LINE columns, continued on indented lines
 * (inih's multi-line values, which config.c joins with one space). out
 * NULL: whether it can be, no line over LONGEST. */
static bool wrapped(FILE *out, const char *key, const char *v)
{
    size_t n = strlen(v), start = 0, used = strlen(key) + 3;
    bool first = true;
    while (start < n) {
        size_t room = first ? (used < LINE ? LINE - used : 1) : LINE - 4, stop = n;
        if (n - start > room) {
            size_t best = 0;
            for (size_t e = start + 1; e < n && e <= start + room; e++)
                if (breakable(v, n, e))
                    best = e;
            for (size_t e = start + room + 1; !best && e < n; e++)
                if (breakable(v, n, e))
                    best = e;
            if (best)
                stop = best;
        }
        if (stop - start + (first ? used : 4) > LONGEST)
            return false;
        if (out)
            fprintf(out, "%s%.*s\n", first ? "" : "    ", (int)(stop - start), v + start);
        start = stop < n ? stop + 1 : n;
        first = false;
    }
    return n > 0;
}

static bool put_wrapped(FILE *out, const char *key, const char *v)
{
    if (!wrapped(NULL, key, v))
        return false;
    fprintf(out, "%s = ", key);
    wrapped(out, key, v);
    return true;
}

/* One line, or nothing. */
static bool fits(const char *key, const char *v)
{
    return !unsafe(v) && strlen(key) + 3 + strlen(v) <= LONGEST;
}

/* A number as a whole word of s (not part of a longer number), each
 * replaced by ${PORT}: how many, the result in *out (malloc'd). */
static int port_to_macro(const char *s, const char *port, char **out)
{
    size_t pl = strlen(port), n = strlen(s), k = 0;
    int count = 0;
    char *o = malloc(n * 7 / (pl ? pl : 1) + n + 8);
    if (!o)
        return -1;
    for (size_t i = 0; i < n;) {
        if (!strncmp(s + i, port, pl) && (i == 0 || !isdigit((unsigned char)s[i - 1])) &&
            !isdigit((unsigned char)s[i + pl])) {
            memcpy(o + k, "${PORT}", 7);
            k += 7;
            i += pl;
            count++;
        } else {
            o[k++] = s[i++];
        }
    }
    o[k] = '\0';
    *out = o;
    return count;
}

/* The command to run, its proxy's port made ${PORT}: malloc'd, or NULL
 * with why; said: what to say of it, when something. */
static char *command_of(const struct lsconf_model *m, char *why, size_t len, char *said,
                        size_t slen)
{
    const char *px = m->proxy;
    if (!px || !*px)
        return strdup(m->cmd);
    const char *h = !strncmp(px, "http://", 7) ? px + 7 : NULL;
    if (!h) {
        snprintf(why, len, "its proxy %.100s is not http://...: vram reaches a model on "
                           "127.0.0.1 at the port it gives it", px);
        return NULL;
    }
    static const char *const local[] = {"localhost:", "127.0.0.1:", "[::1]:", "0.0.0.0:", NULL};
    const char *port = NULL;
    for (size_t i = 0; local[i] && !port; i++)
        if (!strncmp(h, local[i], strlen(local[i])))
            port = h + strlen(local[i]);
    if (!port) {
        snprintf(why, len, "its proxy %.100s is another host: vram runs each model itself, "
                           "on this one", px);
        return NULL;
    }
    size_t pl = strcspn(port, "/");
    if (port[pl] && strcmp(port + pl, "/")) {
        snprintf(why, len, "its proxy %.100s has a path: vram sends requests to the model's "
                           "port as they came", px);
        return NULL;
    }
    if (pl == 7 && !strncmp(port, "${PORT}", 7))
        return strdup(m->cmd);
    char num[8];
    if (pl == 0 || pl >= sizeof num) {
        snprintf(why, len, "its proxy %.100s: no port", px);
        return NULL;
    }
    memcpy(num, port, pl);
    num[pl] = '\0';
    for (size_t i = 0; i < pl; i++)
        if (!isdigit((unsigned char)num[i])) {
            snprintf(why, len, "its proxy %.100s: no port", px);
            return NULL;
        }
    char *cmd;
    int n = port_to_macro(m->cmd, num, &cmd);
    if (n < 0)
        return NULL;
    if (n == 0 && strstr(m->cmd, "${PORT}")) { /* llama-swap would look where it never listens */
        free(cmd);
        snprintf(said, slen, "its proxy %.100s is not where its cmd listens (${PORT}): vram "
                             "reaches it at ${PORT}", px);
        return strdup(m->cmd);
    }
    if (n == 0) {
        free(cmd);
        snprintf(why, len, "its proxy's port %s is not in its cmd: vram gives each model a port "
                           "of its own, in ${PORT} (write ${PORT} where it says %s)", num, num);
        return NULL;
    }
    return cmd;
}

/* The model file a command names (-m, --model, --model-path: a .gguf, or
 * an absolute path), for vram = auto; "" when none, or when it runs a
 * container (whose paths are the container's). */
static void file_of(const struct lscmd *cmd, char *out, size_t len)
{
    out[0] = '\0';
    if (!cmd->argc)
        return;
    const char *base = strrchr(cmd->argv[0], '/');
    base = base ? base + 1 : cmd->argv[0];
    if (!strcmp(base, "docker") || !strcmp(base, "podman") || !strcmp(base, "nerdctl"))
        return;
    for (size_t k = 1; k < cmd->argc; k++) {
        const char *t = cmd->argv[k], *prev = cmd->argv[k - 1];
        const char *f = !strncmp(t, "--model=", 8) ? t + 8
                        : (!strcmp(prev, "-m") || !strcmp(prev, "--model") ||
                           !strcmp(prev, "--model-path"))
                            ? t
                            : NULL;
        size_t fl = f ? strlen(f) : 0;
        if (f && (f[0] == '/' || (fl > 5 && !strcmp(f + fl - 5, ".gguf"))) && !unsafe(f) &&
            !strchr(f, '$') && fl < len) {
            memcpy(out, f, fl + 1);
            return;
        }
    }
}

/* Why v cannot be written as key's value; NULL when it can. */
static const char *unwritable(const char *key, const char *v)
{
    return unsafe(v)                      ? unsafe(v)
           : strlen(v) >= CONFIG_CMD_MAX  ? "longer than vram keeps"
           : !wrapped(NULL, key, v)       ? "a word too long for one line"
                                          : NULL;
}

struct plan {
    bool keep;
    char why[300], said[300]; /* why it is left out; what to say of its command */
    struct lscmd args;        /* its command's words, as llama-swap runs them */
    char *cmd, *stop;         /* those words as vram's command line; its cmdStop's */
    const char *aliases[CONFIG_ALIASES];
    unsigned naliases;
};

/* Which models vram can serve, and their aliases that lead to them alone. */
static void decide(struct w *w, struct plan *pl)
{
    const struct lsconf *c = w->c;
    size_t kept = 0;
    for (size_t i = 0; i < c->nmodels; i++) {
        const struct lsconf_model *m = &c->models[i];
        struct plan *p = &pl[i];
        const char *bad = modelname_check(m->id);
        char *text = NULL;
        struct lscmd stop = {0};
        if (bad)
            snprintf(p->why, sizeof p->why, "its ID is no vram name: %s", bad);
        else if (kept == CONFIG_MAX_MODELS)
            snprintf(p->why, sizeof p->why, "vram serve runs %d models at most", CONFIG_MAX_MODELS);
        else if (!(text = command_of(m, p->why, sizeof p->why, p->said, sizeof p->said)))
            snprintf(p->why + strlen(p->why), sizeof p->why - strlen(p->why), "%s",
                     p->why[0] ? "" : "out of memory");
        else if (lscmd_split(text, &p->args) < 0 || !(p->cmd = lscmd_join(&p->args)))
            snprintf(p->why, sizeof p->why, "its cmd: more than %d words, or out of memory",
                     LSCMD_MAX_ARGS);
        else if (!p->args.argc)
            snprintf(p->why, sizeof p->why, "its cmd has no words (llama-swap needs some too)");
        else if ((bad = unwritable("command", p->cmd)))
            snprintf(p->why, sizeof p->why, "its cmd cannot be written: %s", bad);
        else if (m->stop && (lscmd_split(m->stop, &stop) < 0 ||
                             (stop.argc && !(p->stop = lscmd_join(&stop)))))
            snprintf(p->why, sizeof p->why, "its cmdStop: more than %d words, or out of memory",
                     LSCMD_MAX_ARGS);
        else if (p->stop && (bad = unwritable("stop", p->stop)))
            snprintf(p->why, sizeof p->why, "its cmdStop cannot be written: %s", bad);
        free(text);
        lscmd_free(&stop);
        p->keep = !p->why[0];
        kept += p->keep;
    }
    /* aliases: vram names, each leading to one model (NAME:latest is NAME) */
    for (size_t i = 0; i < c->nmodels; i++) {
        if (!pl[i].keep)
            continue;
        for (size_t a = 0; a < c->models[i].aliases.n; a++) {
            const char *al = c->models[i].aliases.v[a];
            bool clash = modelname_check(al) || pl[i].naliases == CONFIG_ALIASES;
            for (size_t j = 0; !clash && j < c->nmodels; j++) {
                if (!pl[j].keep)
                    continue;
                clash = modelname_same(al, c->models[j].id);
                for (unsigned b = 0; !clash && b < pl[j].naliases; b++)
                    clash = modelname_same(al, pl[j].aliases[b]);
            }
            if (!clash && strlen(al) + 4 < LONGEST)
                pl[i].aliases[pl[i].naliases++] = al;
        }
    }
}

/* "0" or "0,2": GPU indexes as vram's gpu = and gpus = take them (each
 * under 16, none twice). */
static bool gpu_list(const char *v)
{
    unsigned seen = 0;
    for (const char *p = v;;) {
        char *end;
        long g = strtol(p, &end, 10);
        if (end == p || !isdigit((unsigned char)*p) || g < 0 || g >= 16 || (seen & (1u << g)))
            return false;
        seen |= 1u << g;
        if (!*end)
            return true;
        if (*end != ',')
            return false;
        p = end + 1;
    }
}

static void write_env(struct w *w, const struct lsconf_model *m)
{
    bool first = true, gpus_done = false;
    size_t used = 0;
    for (size_t k = 0; k < m->env.n; k++) {
        const char *kv = m->env.v[k], *eq = strchr(kv, '=');
        size_t kl = eq ? (size_t)(eq - kv) : 0;
        bool name = kl && (isalpha((unsigned char)kv[0]) || kv[0] == '_');
        for (size_t i = 0; name && i < kl; i++)
            name = isalnum((unsigned char)kv[i]) || kv[i] == '_';
        if (!name) {
            say(w, "env %.60s: not KEY=VALUE: left out", kv);
            continue;
        }
        const char *v = eq + 1;
        if (kl == 20 && !strncmp(kv, "CUDA_VISIBLE_DEVICES", 20)) {
            if (!gpus_done && gpu_list(v)) {
                gpus_done = true;
                fprintf(w->out, "%s = %s\n", strchr(v, ',') ? "gpus" : "gpu", v);
                say(w, "env CUDA_VISIBLE_DEVICES=%s: vram places the model on GPU%s %s itself "
                       "(%s = %s) and sets the variable to its UUID%s",
                    v, strchr(v, ',') ? "s" : "", v, strchr(v, ',') ? "gpus" : "gpu", v,
                    strchr(v, ',') ? "s" : "");
            } else {
                say(w, "env CUDA_VISIBLE_DEVICES=%.60s: vram chooses the GPUs: left out", v);
            }
            continue;
        }
        if ((kl == 4 && !strncmp(kv, "PORT", 4)) || (kl >= 5 && !strncmp(kv, "VRAM_", 5)) ||
            (kl == 10 && !strncmp(kv, "LD_PRELOAD", 10))) {
            say(w, "env %.*s: vram's to set: left out", (int)kl, kv);
            continue;
        }
        /* KEY=VALUE, the value in "..." (\" and \\) when it holds a blank or a quote */
        char e[2 * LONGEST];
        size_t n = (size_t)snprintf(e, sizeof e, "%.*s=", (int)kl, kv);
        bool quote = !*v || strpbrk(v, " \t\"'\\") != NULL;
        if (quote && *v)
            e[n++] = '"';
        for (const char *p = v; *p && n + 3 < sizeof e; p++) {
            if (quote && (*p == '"' || *p == '\\'))
                e[n++] = '\\';
            e[n++] = *p;
        }
        if (quote && *v && n + 1 < sizeof e)
            e[n++] = '"';
        e[n] = '\0';
        size_t need = kl + 1 + strlen(v) + 1;
        if (unsafe(e) || n + 4 > LONGEST || strlen(v) * 2 + kl + 4 > sizeof e ||
            used + need > CONFIG_ENV_MAX) {
            say(w, "env %.*s: cannot be written in vram.conf (%s): left out", (int)kl, kv,
                unsafe(e) ? unsafe(e) : "too long");
            continue;
        }
        used += need;
        fprintf(w->out, "%s%s\n", first ? "env = " : "    ", e);
        first = false;
    }
}

static void write_model(struct w *w, size_t i, const struct plan *p, size_t nkept)
{
    const struct lsconf *c = w->c;
    const struct lsconf_model *m = &c->models[i];
    w->model = m->id;
    fputc('\n', w->out);
    char head[400];
    snprintf(head, sizeof head, "llama-swap's models.%.120s%s%.100s%s%s%.100s", m->id,
             m->name ? " (" : "", m->name ? m->name : "", m->name ? ")" : "",
             m->description ? ": " : "", m->description ? m->description : "");
    comment(w->out, "", textsafe(head));
    if (!p->keep) {
        say(w, "left out: %s", p->why);
        if (m->cmd) {
            char cmd[600];
            snprintf(cmd, sizeof cmd, "its cmd: %.500s", m->cmd);
            for (char *q = cmd; *q; q++) /* its lines, as llama-swap joins them */
                *q = *q == '\n' || *q == '\t' ? ' ' : *q;
            comment(w->out, "", textsafe(cmd));
        }
        w->model = NULL;
        return;
    }
    fprintf(w->out, "[model %s]\n", m->id);
    put_wrapped(w->out, "command", p->cmd);
    if (p->said[0])
        say(w, "%s", p->said);
    if (!strstr(p->cmd, "${PORT}"))
        say(w, "its cmd has no ${PORT}: vram gives it a port in ${PORT} (and $PORT) and "
               "reaches it there");
    char file[CONFIG_PATH_MAX];
    file_of(&p->args, file, sizeof file);
    if (file[0] && fits("file", file)) {
        fprintf(w->out, "file = %s\nvram = auto\n", file);
    } else {
        fprintf(w->out, "vram = %s\n", w->o->vram);
        say(w, "its cmd names no model file (-m, --model): vram = %s is a guess until it runs "
               "(vram serve then keeps what it measured): set its size",
            w->o->vram);
    }
    if (p->naliases) {
        char list[CONFIG_ALIASES * (MODELNAME_MAX + 2)];
        size_t at = 0;
        for (unsigned a = 0; a < p->naliases; a++)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", a ? ", " : "",
                                   p->aliases[a]);
        put_wrapped(w->out, "aliases", list);
    }
    for (size_t a = 0; a < m->aliases.n; a++) {
        bool used = false;
        for (unsigned b = 0; b < p->naliases; b++)
            used |= p->aliases[b] == m->aliases.v[a];
        if (!used)
            say(w, "alias %.130s: left out (%s)", m->aliases.v[a],
                modelname_check(m->aliases.v[a])
                    ? modelname_check(m->aliases.v[a])
                    : "another model's name or alias, NAME:latest being NAME, or over 8");
    }
    if (m->ttl > 0)
        fprintf(w->out, "keep_alive = %lds\n", m->ttl);
    else if (m->ttl == 0)
        fprintf(w->out, "; ttl: 0, never unloaded for time\nkeep_alive = forever\n");
    if (m->check && !strcmp(m->check, "none"))
        fprintf(w->out, "health = none\n");
    else if (m->check && m->check[0] == '/' && strlen(m->check) < 128 && fits("health", m->check))
        fprintf(w->out, "health = %s\n", m->check);
    else if (m->check && *m->check)
        say(w, "checkEndpoint %.100s: not a path vram can ask (/health is)", m->check);
    if (m->upstream && *m->upstream) {
        if (strlen(m->upstream) < 256 && fits("upstream_name", m->upstream))
            fprintf(w->out, "upstream_name = %s\n", m->upstream);
        else
            say(w, "useModelName: cannot be written in vram.conf: left out");
    }
    write_env(w, m);
    if (p->stop) {
        put_wrapped(w->out, "stop", p->stop);
        long t = m->unload_timeout >= 0 ? m->unload_timeout : c->unload_timeout;
        if (t > 0)
            fprintf(w->out, "stop_timeout = %lds\n", t);
    } else if (m->unload_timeout >= 0) {
        say(w, "unloadTimeout: vram gives a model 10 s after SIGTERM (stop_timeout is for a "
               "stop command)");
    }
    if (c->health_timeout > 0)
        fprintf(w->out, "start_timeout = %lds\n", c->health_timeout);
    if (m->concurrency > 0) {
        fprintf(w->out, "concurrency = %ld\n", m->concurrency);
        say(w, "concurrencyLimit %ld: requests over it wait in line in vram (llama-swap answers "
               "429)",
            m->concurrency);
    }
    if (m->priority >= 0) {
        fprintf(w->out, "priority = %ld\n", m->priority);
        say(w, "routing.scheduler's fifo priority is priority = %ld (5 and up, as vram's "
               "default is 5): a higher one is evicted later, where llama-swap served its "
               "requests first",
            m->priority);
    }
    if (m->group >= 0 && c->groups[m->group].persistent) {
        fprintf(w->out, "pinned = yes\n");
        say(w, "group %.100s is persistent: pinned (never evicted, nor unloaded for time)",
            c->groups[m->group].name);
    }
    if (m->unlisted)
        say(w, "unlisted: vram's /v1/models lists every model");
    for (size_t k = 0; k < m->notes.n; k++)
        say(w, "%s", m->notes.v[k]);
    (void)nkept;
    w->model = NULL;
}

/* apiKeys: the first as token =, the others as tokens = apikeyN:KEY (a
 * key's name is what vram's log says of the requests that carry it). A
 * key vram refuses (a blank, a control character, 128 characters or
 * more), or one tokens = cannot list (a ','), or given twice: said. */
static void write_keys(struct w *w)
{
    const struct lsconf *c = w->c;
    char list[LSCONF_MAX_LIST * 160] = "";
    size_t at = 0;
    bool token = false;
    for (size_t k = 0; k < c->keys.n; k++) {
        const char *key = c->keys.v[k];
        bool ok = *key && strlen(key) < 128, twice = false;
        for (const char *q = key; ok && *q; q++)
            ok = (unsigned char)*q > ' ' && *q != 0x7f;
        for (size_t j = 0; j < k && !twice; j++)
            twice = !strcmp(c->keys.v[j], key);
        if (twice)
            continue; /* one key is one key */
        if (ok && !token && fits("token", key)) {
            fprintf(w->out, "token = %s\n", key);
            token = true;
        } else if (ok && !strchr(key, ',') && !unsafe(key) && at + 160 < sizeof list) {
            at += (size_t)snprintf(list + at, sizeof list - at, "%sapikey%zu:%s", at ? ", " : "",
                                   k + 1, key);
        } else {
            say(w, "apiKeys: key %zu is not carried: %s", k + 1,
                !ok ? "vram takes a key of 1 to 127 characters, no blank or control character"
                    : "it holds a ',' (tokens = separates keys with it): put it in a key file "
                      "(tokens = /PATH, its lines NAME:KEY)");
        }
    }
    if (at && !put_wrapped(w->out, "tokens", list))
        say(w, "apiKeys: the keys after the first are not carried: a key too long for a line");
}

/* [serve]: the proxy's address, keep_alive for globalTTL, max_loaded for
 * the models llama-swap runs at once, port_base, token, preload. */
static void write_serve(struct w *w, const struct plan *pl)
{
    const struct lsconf *c = w->c;
    fprintf(w->out, "\n[serve]\n");
    comment(w->out, "", "llama-swap's address is its --listen flag (:8080 by default), not in "
                        "its file");
    fprintf(w->out, "listen = %s\n", w->o->listen);
    if (c->global_ttl > 0) {
        fprintf(w->out, "keep_alive = %lds\n", c->global_ttl);
    } else {
        comment(w->out, "", "llama-swap's ttl 0 (its default) never unloads for time; vram's "
                            "keep_alive = 0 would unload at once: forever keeps the meaning");
        fprintf(w->out, "keep_alive = forever\n");
    }
    size_t most = 0, loose = 0;
    for (size_t i = 0; i < c->nmodels; i++)
        loose += pl[i].keep && c->models[i].group < 0;
    for (size_t g = 0; g < c->ngroups; g++) {
        size_t n = 0;
        for (size_t i = 0; i < c->nmodels; i++)
            n += pl[i].keep && c->models[i].group == (int)g;
        most += c->groups[g].swap ? (n > 0) : n;
    }
    most += loose > 0; /* the models in no group: one at a time, as llama-swap's default */
    if (c->matrix) {
        say(w, "matrix: its sets are not carried: vram runs together what fits in memory");
    } else if (most) {
        comment(w->out, "", c->ngroups ? "the most models llama-swap's groups run at once"
                                       : "llama-swap runs one model at a time (no groups); "
                                         "without this line vram runs as many as fit");
        fprintf(w->out, "max_loaded = %zu\n", most);
    }
    for (size_t g = 0; g < c->ngroups; g++) {
        const struct lsconf_group *gr = &c->groups[g];
        say(w, "groups.%.100s (swap: %s, exclusive: %s, persistent: %s): %s%s%s",
            gr->name, gr->swap ? "true" : "false", gr->exclusive ? "true" : "false",
            gr->persistent ? "true" : "false",
            gr->swap ? "one of its models at a time is not kept apart in vram, which runs "
                       "together what fits (max_loaded bounds all)"
                     : "its models run together, as in vram when they fit",
            gr->exclusive ? "; exclusive: vram unloads other models only for memory" : "",
            gr->persistent ? "; persistent: its models are pinned" : "");
    }
    if (c->start_port >= 1024 && c->start_port <= 65000)
        fprintf(w->out, "port_base = %ld\n", c->start_port);
    else if (c->start_port >= 0)
        say(w, "startPort %ld: vram's port_base is from 1024 to 65000: left out", c->start_port);
    write_keys(w);
    char list[LSCONF_MAX_LIST * (MODELNAME_MAX + 2)] = "";
    size_t at = 0;
    for (size_t k = 0; k < c->preload.n; k++) {
        const char *id = c->preload.v[k]; /* a model's ID, or an alias as llama-swap takes it */
        bool found = false;
        for (size_t i = 0; i < c->nmodels && !found; i++) {
            for (size_t a = 0; a < c->models[i].aliases.n && !found; a++)
                if (pl[i].keep && !strcmp(c->models[i].aliases.v[a], id))
                    id = c->models[i].id;
            found = pl[i].keep && !strcmp(c->models[i].id, id);
        }
        for (size_t j = 0; found && j < k; j++) /* said twice: once */
            found = strcmp(c->preload.v[j], id) != 0;
        if (found)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", at ? ", " : "", id);
        else
            say(w, "hooks.on_startup.preload: %.100s is no model written here: left out", id);
    }
    if (at)
        put_wrapped(w->out, "preload", list);
    for (size_t k = 0; k < c->notes.n; k++)
        say(w, "%s", c->notes.v[k]);
}

size_t lswrite(const struct lsconf *c, const struct lswrite_opts *o, FILE *out, FILE *notes)
{
    struct w w = {c, o, out, notes, NULL};
    struct plan *pl = calloc(c->nmodels ? c->nmodels : 1, sizeof *pl);
    if (!pl)
        return 0;
    decide(&w, pl);
    size_t kept = 0;
    for (size_t i = 0; i < c->nmodels; i++)
        kept += pl[i].keep;
    char head[300];
    snprintf(head, sizeof head, "vram.conf from llama-swap's %.200s, by vram import llama-swap",
             o->source);
    for (char *q = head; *q; q++)
        if ((unsigned char)*q < 0x20 || *q == 0x7f)
            *q = ' ';
    comment(out, "", head);
    fprintf(out, "; check it with: vram serve --check --config FILE\n");
    comment(out, "", "what vram has no equivalent for is said in comments like these, and was "
                     "said on stderr (docs/migrate.md has every setting side by side)");
    if (kept)
        write_serve(&w, pl);
    for (size_t i = 0; i < c->nmodels; i++)
        write_model(&w, i, &pl[i], kept);
    for (size_t i = 0; i < c->nmodels; i++) {
        free(pl[i].cmd);
        free(pl[i].stop);
        lscmd_free(&pl[i].args);
    }
    free(pl);
    return kept;
}
