/* cmd_import: `vram import llama-swap FILE`: llama-swap's config.yaml as an
 * equivalent vram.conf on standard output, what has no equivalent listed
 * in it as comments and on standard error (cli/lsconf.c reads, cli/lswrite.c
 * writes). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/lsconf.h"
#include "cli/lswrite.h"
#include "core/textsafe.h"
#include "core/units.h"

struct import_opts {
    const char *listen, *vram;
};

static int cmd_import(const void *opts, int argc, char **argv);

/* --vram: a size, kept as written for the file */
static int parse_size(const char *arg, void *field)
{
    uint64_t b;
    if (units_parse_size(arg, &b) < 0 || !b)
        return -1;
    *(const char **)field = arg;
    return 0;
}

#define O struct import_opts
static const struct cmd_opt import_opts[] = {
    {"listen", 'l', CMD_STRING(O, listen), .arg = "HOST:PORT",
     .help = "the proxy's address (default 127.0.0.1:8080, llama-swap's port; its --listen is a "
             "flag, not in its file)"},
    {"vram", 0, CMD_CUSTOM(O, vram, parse_size), .arg = "SIZE", .fix = "a size, like 8G",
     .help = "the size of a model whose command names no model file (default 8G; vram serve "
             "measures it when it runs)"},
    {NULL},
};
#undef O

const struct cmd_entry cmd_import_entry = {
    .name = "import",
    .args = "llama-swap FILE [--listen HOST:PORT] [--vram SIZE]",
    .summary = "turn another server's configuration (llama-swap's) into a vram.conf",
    .opts = import_opts,
    .help = "Writes the vram.conf that serves the same models under the same names to\n"
            "standard output: macros expanded (${env.NAME}, macros:, ${MODEL_ID}), each\n"
            "model's cmd, aliases, ttl (llama-swap's 0 is never: keep_alive = forever),\n"
            "checkEndpoint (health), useModelName (upstream_name), env, cmdStop (stop),\n"
            "groups, hooks.on_startup.preload. What vram has no equivalent for is said\n"
            "in comments and on standard error. FILE - reads standard input.\n"
            "\n"
            "  vram import llama-swap config.yaml >vram.conf\n"
            "  vram serve --check --config vram.conf\n"
            "\n"
            "docs/migrate.md has llama-swap's and Ollama's settings side by side.\n",
    .size = sizeof(struct import_opts),
    .defaults = &(const struct import_opts){.listen = "127.0.0.1:8080", .vram = "8G"},
    .max_operands = 2,
    .exec = cmd_import,
};

/* The file's text (at most LSCONF_MAX_BYTES), a regular file or standard
 * input; NULL with err. */
static char *read_all(const char *path, size_t *len, char *err, size_t errlen, int *rc)
{
    *rc = 2; /* the file is wrong, unless reading it failed */
    int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) : 0;
    struct stat st;
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (fd && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    if (fd)
        fcntl(fd, F_SETFL, 0);
    char *t = malloc(LSCONF_MAX_BYTES + 2);
    size_t n = 0;
    ssize_t r = 1;
    while (t && n <= LSCONF_MAX_BYTES && (r = read(fd, t + n, LSCONF_MAX_BYTES + 1 - n)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        n += (size_t)r;
    }
    if (fd)
        close(fd);
    if (!t || r < 0 || n > LSCONF_MAX_BYTES) {
        *rc = !t || r < 0 ? 1 : 2;
        snprintf(err, errlen, "%s: %s", path,
                 !t ? "out of memory" : r < 0 ? strerror(errno) : "larger than 1 MiB");
        free(t);
        return NULL;
    }
    t[n] = '\0';
    *len = n;
    return t;
}

static int cmd_import(const void *opts, int argc, char **argv)
{
    const struct import_opts *o = opts;
    const char *listen = o->listen, *vram = o->vram;
    if (argc >= 1 && strcmp(argv[0], "llama-swap"))
        return cmd_bad_usage(&cmd_import_entry,
                             "'%s': llama-swap is what vram imports (Ollama's settings are "
                             "environment variables: docs/migrate.md)",
                             argv[0]);
    if (argc != 2)
        return cmd_bad_usage(&cmd_import_entry, "which file? llama-swap's config.yaml");
    const char *colon = strrchr(listen, ':');
    bool ctl = false;
    for (const char *k = listen; *k; k++)
        ctl |= (unsigned char)*k <= ' ' || *k == ';' || *k == 0x7f;
    if (!colon || colon == listen || !colon[1] || strlen(listen) > 100 || ctl)
        return cmd_bad_usage(&cmd_import_entry, "--listen: HOST:PORT, like 127.0.0.1:8080");
    const char *path = argv[1];
    char err[600];
    size_t len;
    int rc;
    char *text = read_all(path, &len, err, sizeof err, &rc);
    if (!text) {
        fprintf(stderr, "vram import: %s\n", err);
        return rc;
    }
    struct lsconf *conf = calloc(1, sizeof *conf);
    if (!conf) {
        free(text);
        fprintf(stderr, "vram import: out of memory\n");
        return 1;
    }
    rc = 0;
    if (lsconf_read(text, len, conf, err, sizeof err) < 0) {
        fprintf(stderr, "vram import: %s: %s\n", path, textsafe(err));
        rc = 2;
    } else {
        struct lswrite_opts wo = {strcmp(path, "-") ? path : "standard input", listen, vram};
        if (!lswrite(conf, &wo, stdout, stderr)) {
            fprintf(stderr, "vram import: %s: no model vram can serve (the reasons are above)\n",
                    path);
            rc = 2;
        }
    }
    lsconf_free(conf);
    free(conf);
    free(text);
    return rc;
}
