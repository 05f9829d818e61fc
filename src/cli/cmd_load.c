/* cmd_load: `vram load` and `vram unload`, asking `vram serve` to make a model
 * resident (waiting until it is) or to stop it. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/client.h"
#include "cli/cmd.h"
#include "cli/progress.h"
#include "core/modelname.h"
#include "core/units.h"

static int cmd_load(int argc, char **argv);
static int cmd_unload(int argc, char **argv);

const struct cmd_entry cmd_load_entry = {
    .name = "load",
    .args = "MODEL [--timeout S] [--socket PATH]",
    .summary = "make a model of vram serve ready (start or resume it), and wait",
    .help = "  -t, --timeout S     how long to wait (default 5m)\n"
            "  -s, --socket PATH   the daemon's socket\n",
    .exec = cmd_load,
};

const struct cmd_entry cmd_unload_entry = {
    .name = "unload",
    .args = "MODEL [--socket PATH]",
    .summary = "stop a model of vram serve",
    .help = "  -s, --socket PATH   the daemon's socket\n",
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

static int run(const struct cmd_entry *e, int argc, char **argv, bool timeout_ok)
{
    static const struct option opts[] = {
        {"timeout", required_argument, NULL, 't'},
        {"socket", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *sock = NULL;
    double timeout = -1;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "t:s:h", opts, NULL)) != -1) {
        if (c == 's')
            sock = optarg;
        else if (c == 't' && timeout_ok && units_parse_seconds(optarg, &timeout) == 0)
            ;
        else if (c == 'h') {
            cmd_usage(e, 0);
            return 0;
        } else
            return cmd_bad_usage(e, c == 't' ? "--timeout: a duration like 30s" : NULL);
    }
    if (optind == argc)
        return which_model(e, sock);
    if (optind != argc - 1)
        return cmd_bad_usage(e, "unexpected argument '%s'", argv[optind + 1]);
    char path[MODELNAME_MAX * 3 + 64], err[512];
    if (client_model_path(argv[optind], e->name, path, sizeof path, err, sizeof err) < 0) {
        fprintf(stderr, "vram %s: %s\n", e->name, err);
        return 2;
    }
    json_t *body = timeout >= 0 ? json_pack("{s:f}", "timeout", timeout) : NULL, *r;
    struct progress pr;
    char what[160];
    snprintf(what, sizeof what, "%s %s", timeout_ok ? "loading" : "unloading", argv[optind]);
    progress_start(&pr, what);
    long st = client_call(client_socket(sock), "POST", path, body, &r, err, sizeof err);
    progress_stop(&pr);
    json_decref(body);
    int rc = client_report(e->name, st, r, err);
    json_decref(r);
    return rc;
}

static int cmd_load(int argc, char **argv)
{
    return run(&cmd_load_entry, argc, argv, true);
}

static int cmd_unload(int argc, char **argv)
{
    return run(&cmd_unload_entry, argc, argv, false);
}
