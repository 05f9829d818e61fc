/* cmd_serve: `vram serve`, the daemon that runs many models on limited VRAM:
 * each model its own process, started on demand, suspended to host RAM
 * when another needs the room. --check validates a configuration. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cmd.h"
#include "daemon/config.h"
#include "daemon/serve.h"

static int cmd_serve(int argc, char **argv);

const struct cmd_entry cmd_serve_entry = {
    .name = "serve",
    .args = "[--config FILE] [--check]",
    .summary = "run many models on limited VRAM: start on demand, suspend idle ones to RAM",
    .help = "  -c, --config FILE  the configuration (default /etc/vram/vram.conf, or\n"
            "                     $VRAM_CONFIG)\n"
            "      --check        check the configuration and exit\n"
            "\n"
            "Each [model NAME] section gives a command (with ${PORT}), its VRAM (a size,\n"
            "or auto with file = MODEL), gpus, idle, evict (suspend or stop), priority,\n"
            "pinned, health, start_timeout. See examples/vram.conf and docs/serve.md.\n"
            "SIGHUP reloads the configuration; SIGTERM stops the models and exits.\n"
            "Clients: vram ps, vram load, vram unload, vram suspend, vram resume.\n",
    .exec = cmd_serve,
};

static int cmd_serve(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"check", no_argument, NULL, 'k'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *path = getenv("VRAM_CONFIG");
    bool check = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            path = optarg;
            break;
        case 'k':
            check = true;
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
    if (!path)
        path = "/etc/vram/vram.conf";
    char err[600];
    if (check) {
        struct config *cfg = malloc(sizeof *cfg);
        if (!cfg)
            return 1;
        int rc = config_load(path, cfg, err, sizeof err);
        if (rc == 0 && cfg->notes[0])
            fprintf(stderr, "vram serve: %s\n", cfg->notes);
        if (rc == 0)
            printf("%s: %zu model%s, socket %s\n", path, cfg->nmodels, cfg->nmodels == 1 ? "" : "s",
                   cfg->socket);
        else
            fprintf(stderr, "vram serve: %s\n", err);
        free(cfg);
        return rc == 0 ? 0 : 2;
    }
    if (serve_run(path, err, sizeof err) < 0) {
        fprintf(stderr, "vram serve: %s\n", err);
        return 1;
    }
    return 0;
}
