/* cmd_serve: `vram serve`, the daemon that runs many models on limited VRAM:
 * each model its own process, started on demand, suspended to host RAM
 * when another needs the room. --check validates a configuration. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/clock.h"
#include "app/log.h"
#include "app/paths.h"
#include "cli/cmd.h"
#include "daemon/config.h"
#include "daemon/serve.h"
#include "probe/probe.h"

static int cmd_serve(int argc, char **argv);

const struct cmd_entry cmd_serve_entry = {
    .name = "serve",
    .args = "[--config FILE] [--check] [--verbose|--quiet]",
    .summary = "run many models on limited VRAM: start on demand, suspend idle ones to RAM",
    .help = "  -c, --config FILE  the configuration (default $VRAM_CONFIG, else\n"
            "                     /etc/vram/vram.conf as root, else\n"
            "                     $XDG_CONFIG_HOME/vram/vram.conf)\n"
            "      --check        check the configuration and where libvramcap is, and exit\n"
            "  -v, --verbose      log debugging detail too\n"
            "  -q, --quiet        log warnings and errors only (not each model's start,\n"
            "                     suspend and resume, nor each proxied request)\n"
            "\n"
            "Each [model NAME] section gives a command (with ${PORT}), its VRAM (a size,\n"
            "or auto with file = MODEL), gpus, keep_alive (how long unused before it\n"
            "gives its VRAM back), evict (suspend or stop), swap, priority, pinned,\n"
            "health, start_timeout. See man vram.conf, and the example configuration.\n"
            "SIGHUP reloads the configuration; SIGTERM stops the models and exits.\n"
            "Under systemd (vram.service, or the user unit) it says when it is ready and\n"
            "logs to the journal with levels. As root its files are in /run/vram,\n"
            "/var/lib/vram and /var/log/vram; as a user in $XDG_RUNTIME_DIR/vram and\n"
            "$XDG_STATE_HOME/vram, unless the configuration says otherwise.\n"
            "Clients: vram ps, vram load, vram unload, vram suspend, vram resume.\n",
    .exec = cmd_serve,
};

/* The sizes against this machine's GPUs, when a driver answers here:
 * 0 (or no driver: the daemon checks when it starts), or -1 with err. */
static int check_sizes(const struct config *cfg, char *err, size_t len)
{
    struct probe *p;
    char e[256];
    if (probe_open(&p, "/proc", e, sizeof e) < 0)
        return 0;
    struct snap s;
    memset(&s, 0, sizeof s);
    probe_sample(p, &s, PROBE_MEMORY, clock_wall_ms());
    uint64_t holds[SCHED_MAX_GPUS];
    size_t n = s.ngpus < SCHED_MAX_GPUS ? s.ngpus : SCHED_MAX_GPUS;
    for (size_t g = 0; g < n; g++)
        holds[g] = config_gpu_holds(cfg, (unsigned)g, s.gpus[g].mem.total, s.gpus[g].mem.reserved);
    int rc = n ? config_check_sizes(cfg, holds, n, err, len) : 0;
    snap_free(&s);
    probe_exiting(p);
    probe_close(p);
    return rc;
}

static int check_config(const char *path)
{
    char err[600], why[600], shim[1024];
    struct config *cfg = malloc(sizeof *cfg);
    if (!cfg)
        return 1;
    int rc = 0;
    if (config_load(path, cfg, err, sizeof err) < 0 ||
        config_check_socket(cfg, err, sizeof err) < 0 || check_sizes(cfg, err, sizeof err) < 0) {
        fprintf(stderr, "vram serve: %s\n", err);
        rc = 2;
    } else if (serve_find_vramcap(cfg, shim, sizeof shim, why, sizeof why, err, sizeof err) < 0) {
        fprintf(stderr, "vram serve: %s\n", err);
        rc = 1;
    } else {
        if (cfg->notes[0])
            fprintf(stderr, "vram serve: %s\n", cfg->notes);
        printf("%s: %zu model%s, socket %s, state %s, logs %s\n", path, cfg->nmodels,
               cfg->nmodels == 1 ? "" : "s", cfg->socket, cfg->state, cfg->logs);
        if (shim[0])
            printf("libvramcap: %s\n", shim);
        else
            printf("libvramcap: missing, and no model needs it now: %s\n", why);
    }
    free(cfg);
    return rc;
}

static int cmd_serve(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"check", no_argument, NULL, 'k'},
        {"verbose", no_argument, NULL, 'v'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *path = getenv("VRAM_CONFIG");
    bool check = false;
    enum log_level max = LOG_LV_INFO;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:vqh", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            path = optarg;
            break;
        case 'k':
            check = true;
            break;
        case 'v':
            max = LOG_LV_DEBUG;
            break;
        case 'q':
            max = LOG_LV_WARN;
            break;
        case 'h':
            cmd_usage(&cmd_serve_entry, 0);
            return 0;
        default:
            return cmd_bad_usage(&cmd_serve_entry, NULL);
        }
    }
    if (optind < argc)
        return cmd_bad_usage(&cmd_serve_entry, "unexpected argument '%s'", argv[optind]);
    struct paths def;
    paths_default(&def);
    if (!path || !*path)
        path = def.config;
    if (check)
        return check_config(path);
    log_init("vram serve", max);
    char err[600];
    if (serve_run(path, err, sizeof err) < 0) {
        log_msg(LOG_LV_ERROR, "%s", err);
        if (def.user && !strcmp(path, def.config) && access(path, F_OK) != 0)
            log_msg(LOG_LV_ERROR,
                    "(as a user, vram serve reads %s: copy /etc/vram/vram.conf or "
                    "examples/vram.conf there, without its socket, state and logs lines, or "
                    "give --config)",
                    path);
        fflush(stderr);
        return 1;
    }
    return 0;
}
