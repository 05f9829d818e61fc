/* precheck: a model's command read as sh reads the start of one (its
 * words, quotes and backslashes; NAME=VALUE, exec and env before the
 * program), its program looked up as sh looks it up, its files and
 * docker's daemon asked for. A word the shell alone can know ($, `,
 * globs, ~) is left alone, and so is a command that begins with more
 * than a program (a builtin, a reserved word, a subshell). */
#include "daemon/precheck.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define WORDS    64
#define WORD_MAX 512
#define SH_PATH  "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" /* dash's own */

struct words {
    char w[WORDS][WORD_MAX];
    bool known[WORDS]; /* false: the shell makes it ($, `, a glob, ~) */
    size_t n;
};

/* The words of cmd's first simple command, up to an operator. */
static void split(const char *cmd, struct words *ws)
{
    ws->n = 0;
    const char *p = cmd;
    while (ws->n < WORDS) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || strchr(";&|<>()\n#", *p))
            return;
        char *w = ws->w[ws->n];
        size_t k = 0;
        bool known = *p != '~';
        char q = 0;
        for (; *p && (q || !strchr(" \t\n;&|<>()", *p)); p++) {
            char c = *p;
            if (q == '\'') {
                if (c == '\'') {
                    q = 0;
                    continue;
                }
            } else if (c == '\\' && p[1] && (!q || strchr("$`\"\\", p[1]))) {
                c = *++p;
            } else if (c == '\'' && !q) {
                q = c;
                continue;
            } else if (c == '"') {
                q = q ? 0 : '"';
                continue;
            } else if (c == '$' || c == '`' || (!q && strchr("*?[", c))) {
                known = false;
            }
            if (k + 1 < WORD_MAX)
                w[k++] = c;
            else
                known = false;
        }
        w[k] = '\0';
        ws->known[ws->n++] = known && !q;
    }
}

static bool assignment(const char *w)
{
    const char *eq = strchr(w, '=');
    if (!eq || eq == w || (*w >= '0' && *w <= '9'))
        return false;
    for (const char *c = w; c < eq; c++)
        if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              (*c >= '0' && *c <= '9')))
            return false;
    return true;
}

/* The program's word: after NAME=VALUE words, exec (and its -a NAME),
 * env (and its options, NAME=VALUE words); -1 when there is none. */
static int program_at(const struct words *ws)
{
    size_t i = 0;
    while (i < ws->n && ws->known[i] && assignment(ws->w[i]))
        i++;
    if (i < ws->n && !strcmp(ws->w[i], "exec")) {
        i++;
        while (i < ws->n && ws->w[i][0] == '-')
            i += !strcmp(ws->w[i], "-a") ? 2 : 1;
    }
    if (i < ws->n && (!strcmp(ws->w[i], "env") || !strcmp(ws->w[i], "/usr/bin/env"))) {
        i++;
        while (i < ws->n && (ws->w[i][0] == '-' || assignment(ws->w[i])))
            i += !strcmp(ws->w[i], "-u") || !strcmp(ws->w[i], "-C") ? 2 : 1;
    }
    return i < ws->n ? (int)i : -1;
}

/* What sh runs itself, or reads as more than a program's name. */
static bool shell_word(const char *w)
{
    static const char *const own[] = {
        "!",     "{",     "}",    "case",   "do",    "done", "elif",   "else", "esac",  "fi",
        "for",   "if",    "in",   "then",   "until", "while", ".",     ":",    "break", "cd",
        "command", "continue", "eval", "exit", "export", "readonly", "return", "set", "shift",
        "times", "trap",  "unset", "umask", "wait", "true", "false", "echo", "printf", "test",
        "[",     "read",  "kill", "pwd",   "type", "ulimit", "alias", "getopts", "hash", NULL};
    for (size_t i = 0; own[i]; i++)
        if (!strcmp(w, own[i]))
            return true;
    return false;
}

/* The model's env = value of name, else NULL. */
static const char *model_env(const struct config_model *m, const char *name)
{
    size_t nl = strlen(name);
    const char *kv = m->env;
    for (unsigned i = 0; i < m->nenv; i++, kv += strlen(kv) + 1)
        if (!strncmp(kv, name, nl) && kv[nl] == '=')
            return kv + nl + 1;
    return NULL;
}

struct out {
    char *p;
    size_t len, at, n;
    const struct config *c;
    const struct config_model *m;
};

static void say(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct out *o, const char *fmt, ...)
{
    o->n++;
    if (o->at + 1 >= o->len)
        return;
    int k = snprintf(o->p + o->at, o->len - o->at, "%s%s: [model %s] ", o->at ? "\n" : "",
                     o->c->path, o->m->name);
    if (k > 0)
        o->at += (size_t)k < o->len - o->at ? (size_t)k : o->len - o->at - 1;
    va_list ap;
    va_start(ap, fmt);
    k = vsnprintf(o->p + o->at, o->len - o->at, fmt, ap);
    va_end(ap);
    if (k > 0)
        o->at += (size_t)k < o->len - o->at ? (size_t)k : o->len - o->at - 1;
}

/* The program as sh finds it: 0, or an errno (ENOENT: nowhere). */
static int find_program(const char *prog, const char *path)
{
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0 ? 0 : errno;
    int best = ENOENT;
    for (const char *d = path;; d++) {
        size_t dl = strcspn(d, ":");
        char full[WORD_MAX * 2 + 2];
        snprintf(full, sizeof full, "%.*s%s%s", (int)dl, dl ? d : ".", "/", prog);
        struct stat st;
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(full, X_OK) == 0)
                return 0;
            best = EACCES; /* there, but not for us: sh says so too */
        }
        d += dl;
        if (!*d)
            return best;
    }
}

static void check_program(struct out *o, const char *prog)
{
    const char *path = model_env(o->m, "PATH");
    if (!path)
        path = getenv("PATH");
    if (!path)
        path = SH_PATH;
    int e = find_program(prog, path);
    if (!e)
        return;
    if (strchr(prog, '/'))
        say(o, "%s: %s: install it there, or fix the path in command =", prog, strerror(e));
    else if (e == EACCES)
        say(o, "%s: on the PATH (%.200s) but not executable for this user: chmod +x it, or run "
               "vram serve as a user who may run it",
            prog, path);
    else
        say(o, "%s: not found on the PATH vram serve gives it (%.200s): install it, give its "
               "full path in command =, or set PATH in the model's env =",
            prog, path);
}

/* Whether docker's daemon takes a connection at host (unix:///PATH or
 * tcp://HOST:PORT): 0, or an errno; -1 for an address not checked. */
static int docker_answers(const char *host)
{
    if (!strncmp(host, "unix://", 7)) {
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        if (strlen(host + 7) >= sizeof a.sun_path)
            return ENAMETOOLONG;
        snprintf(a.sun_path, sizeof a.sun_path, "%s", host + 7);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return errno;
        int rc = connect(fd, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : errno;
        close(fd);
        return rc;
    }
    if (strncmp(host, "tcp://", 6))
        return -1; /* ssh://, a context...: docker's own to reach */
    char h[256], *port;
    snprintf(h, sizeof h, "%s", host + 6);
    h[strcspn(h, "/")] = '\0';
    if (!(port = strrchr(h, ':')))
        return -1;
    *port++ = '\0';
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
    if (getaddrinfo(h[0] == '[' ? h + 1 : h, port, &hints, &res) != 0)
        return EHOSTUNREACH;
    int rc = ECONNREFUSED;
    for (struct addrinfo *ai = res; ai && rc; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            rc = 0;
        } else if (errno == EINPROGRESS) {
            struct pollfd pf = {fd, POLLOUT, 0};
            int err = ETIMEDOUT;
            socklen_t el = sizeof err;
            if (poll(&pf, 1, 1000) == 1)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
            rc = err;
        } else {
            rc = errno;
        }
        close(fd);
    }
    freeaddrinfo(res);
    return rc;
}

static void check_docker(struct out *o)
{
    const char *host = model_env(o->m, "DOCKER_HOST");
    if (!host)
        host = getenv("DOCKER_HOST");
    if (!host || !*host) {
        if (model_env(o->m, "DOCKER_CONTEXT") || getenv("DOCKER_CONTEXT"))
            return; /* a context: docker's own to read */
        host = "unix:///var/run/docker.sock";
    }
    int e = docker_answers(host);
    if (e <= 0)
        return;
    say(o, "docker: its daemon does not answer at %.200s (%s): start it (systemctl start "
           "docker)%s, or set DOCKER_HOST where it listens",
        host, strerror(e),
        e == EACCES ? "; as a user, be in the docker group (or run docker rootless)" : "");
}

static void check_file(struct out *o, const char *what, const char *file)
{
    struct stat st;
    if (stat(file, &st) == 0)
        return;
    say(o, "%s %s: %s: download it there (vram fit says what fits), or fix the path", what, file,
        strerror(errno));
}

static void check_model(struct out *o)
{
    const struct config_model *m = o->m;
    if (m->file[0])
        check_file(o, "file =", m->file);
    struct words *ws = malloc(sizeof *ws);
    if (!ws)
        return;
    split(m->command, ws);
    int i = program_at(ws);
    if (i < 0 || !ws->known[i] || shell_word(ws->w[i])) {
        free(ws);
        return;
    }
    const char *prog = ws->w[i], *base = strrchr(prog, '/');
    base = base ? base + 1 : prog;
    check_program(o, prog);
    bool container = !strcmp(base, "docker") || !strcmp(base, "podman") ||
                     !strcmp(base, "nerdctl") || !strcmp(base, "apptainer") ||
                     !strcmp(base, "singularity");
    if (!strcmp(base, "docker"))
        check_docker(o);
    for (size_t k = (size_t)i + 1; !container && k < ws->n; k++) {
        const char *w = ws->w[k], *prev = ws->w[k - 1];
        const char *f = !strncmp(w, "--model=", 8) ? w + 8
                        : (!strcmp(prev, "-m") || !strcmp(prev, "--model")) && ws->known[k - 1]
                            ? w
                            : NULL;
        /* an absolute path, not file = again; a name (vLLM's, -hf's) is no file */
        if (f && ws->known[k] && f[0] == '/' && strcmp(f, m->file))
            check_file(o, "its command's model", f);
    }
    free(ws);
}

size_t precheck_models(const struct config *c, char *out, size_t len)
{
    struct out o = {out, len, 0, 0, c, NULL};
    if (len)
        out[0] = '\0';
    for (size_t i = 0; i < c->nmodels; i++) {
        o.m = &c->models[i];
        check_model(&o);
    }
    return o.n;
}
