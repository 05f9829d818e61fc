/* cmd_load: `vram load` and `vram unload`, asking `vram serve` to make a model
 * resident (waiting until it is) or to stop it. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/client.h"
#include "cli/cmd.h"
#include "cli/target.h"

struct load_opts {
    double timeout; /* < 0: the daemon's */
    const char *socket;
};

static int cmd_load(const void *opts, int argc, char **argv);
static int cmd_unload(const void *opts, int argc, char **argv);

#define O struct load_opts
static const struct cmd_opt load_opts[] = {
    {"timeout", 't', CMD_SECONDS(O, timeout, 0, 86400), .arg = "S",
     .fix = "a duration from 0 to 24h, like 30s or 5m", .help = "how long to wait (default 5m)"},
    CMD_SOCKET_OPT(O, "the daemon's socket"),
    {NULL},
};
static const struct cmd_opt unload_opts[] = {
    CMD_SOCKET_OPT(O, "the daemon's socket"),
    {NULL},
};
#undef O

const struct cmd_entry cmd_load_entry = {
    .name = "load",
    .args = "MODEL [--timeout S] [--socket PATH]",
    .summary = "make a model of vram serve ready (start or resume it), and wait",
    .opts = load_opts,
    .size = sizeof(struct load_opts),
    .defaults = &(const struct load_opts){.timeout = -1},
    .max_operands = 1,
    .exec = cmd_load,
};

const struct cmd_entry cmd_unload_entry = {
    .name = "unload",
    .args = "MODEL [--socket PATH]",
    .summary = "stop a model of vram serve",
    .opts = unload_opts,
    .size = sizeof(struct load_opts),
    .defaults = &(const struct load_opts){.timeout = -1},
    .max_operands = 1,
    .exec = cmd_unload,
};

/* Without a model named: which there are, or that no daemon answers (so
 * that the hint never names what cannot work here). */
static int which_model(const struct cmd_entry *e, const char *sock)
{
    char err[512], names[400] = "";
    json_t *r = NULL;
    const char *at = client_socket(sock);
    if (client_call(at, "GET", "/v1/models", NULL, &r, err, sizeof err) != 200) {
        json_decref(r);
        return cmd_bad_usage(e, "which model? (none known: %s)", err);
    }
    size_t i, len = 0;
    json_t *m;
    json_array_foreach(json_object_get(r, "models"), i, m) {
        const char *n = json_string_value(json_object_get(m, "name"));
        if (n && len + strlen(n) + 8 < sizeof names)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", n);
    }
    json_decref(r);
    return cmd_bad_usage(e, "which model? %s (vram ps shows their states)",
                         len ? names : "vram serve has none");
}

static int run(const struct cmd_entry *e, const struct load_opts *o, int argc, char **argv)
{
    const char *sock = o->socket;
    if (argc == 0)
        return which_model(e, sock);
    json_t *body = o->timeout >= 0 ? json_pack("{s:f}", "timeout", o->timeout) : NULL;
    int rc = target_model(e, sock, argv[0], body, e == &cmd_load_entry ? "loading" : "unloading");
    json_decref(body);
    return rc;
}

static int cmd_load(const void *opts, int argc, char **argv)
{
    return run(&cmd_load_entry, opts, argc, argv);
}

static int cmd_unload(const void *opts, int argc, char **argv)
{
    return run(&cmd_unload_entry, opts, argc, argv);
}
