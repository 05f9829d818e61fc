/* cmd_serve: `vram serve`, the daemon that runs many models on limited VRAM:
 * each model its own process, started on demand, suspended to host RAM
 * when another needs the room. --check validates a configuration. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/log.h"
#include "app/paths.h"
#include "app/selfpath.h"
#include "cli/cmd.h"
#include "conf/config.h"
#include "daemon/serve.h"

static int cmd_serve(int argc, char **argv);

const struct cmd_entry cmd_serve_entry = {
    .name = "serve",
    .args = "[--config FILE] [--check] [--verbose|--quiet]",
    .summary = "run many models on limited VRAM: start on demand, suspend idle ones to RAM",
    .help = "  -c, --config FILE  the configuration (default $VRAM_CONFIG, else\n"
            "                     /etc/vram/vram.conf as root, else\n"
            "                     $XDG_CONFIG_HOME/vram/vram.conf)\n"
            "      --check        do all that vram serve does before it runs a model, as\n"
            "                     you, and exit: the configuration, libvramcap, the\n"
            "                     folders of the socket, state and logs, the GPUs, the\n"
            "                     addresses (fails exactly when vram serve would)\n"
            "  -v, --verbose      log debugging detail too\n"
            "  -q, --quiet        log warnings and errors only (not each model's start,\n"
            "                     suspend and resume, nor each proxied request)\n"
            "\n"
            "Each [model NAME] section gives a command (with ${PORT}), its VRAM (a size,\n"
            "or auto with file = MODEL), gpus, keep_alive (how long unused before it\n"
            "gives its VRAM back), evict (suspend or stop), swap, priority, pinned, health\n"
            "(a path, or none), start_timeout, stop (a command), aliases, upstream_name.\n"
            "NAME may be a Hugging Face id (Qwen/Qwen2.5-7B-Instruct) or Ollama's\n"
            "namespace/model:tag. [serve] gives listen, keep_alive (the models' default),\n"
            "max_loaded (6, 2 per gpu), max_queue, preload; where it does not say,\n"
            "OLLAMA_KEEP_ALIVE, OLLAMA_MAX_LOADED_MODELS and OLLAMA_MAX_QUEUE are\n"
            "read. See vram.conf(5), examples/vram.conf and docs/serve.md; vram import\n"
            "llama-swap writes a vram.conf from llama-swap's (docs/migrate.md).\n"
            "With discover = all (or ollama huggingface lmstudio llamacpp) in [serve], the\n"
            "GGUF models already on disk are served with no [model] section, by the names\n"
            "their stores give them, through llama-server (llama_server = PATH).\n"
            "SIGHUP reloads the configuration; SIGTERM stops the models and exits.\n"
            "Under systemd (vram.service, or the user unit) it says when it is ready and\n"
            "logs to the journal with levels. As root its files are in /run/vram,\n"
            "/var/lib/vram and /var/log/vram; as a user in $XDG_RUNTIME_DIR/vram and\n"
            "$XDG_STATE_HOME/vram, unless the configuration says otherwise.\n"
            "Clients: vram ps, vram load, vram unload, vram suspend, vram resume.\n"
            "listen = HOST:PORT serves the models and the dashboard (vram ui opens it); in\n"
            "[serve] token and tokens (named keys, key files) ask clients for a key;\n"
            "origins (else $OLLAMA_ORIGINS) lets pages of other sites in, with CORS; hosts\n"
            "adds names a browser may reach it by (docs/proxy.md).\n",
    .exec = cmd_serve,
};

/* The fix for a user whose default configuration is not there. */
static void hint_missing(const struct paths *def, const char *path)
{
    char example[600];
    if (!def->user || strcmp(path, def->config) || access(path, F_OK) == 0)
        return;
    if (selfpath_data("examples/vram.conf", example, sizeof example) < 0)
        snprintf(example, sizeof example, "examples/vram.conf of vram's sources");
    log_msg(LOG_LV_ERROR, "(as a user, vram serve reads %s: copy %s there and edit it, or give --config)",
            path, example);
}

static int check_config(const struct paths *def, const char *path)
{
    char err[600];
    bool input = false;
    struct serve_summary *sum = malloc(sizeof *sum);
    if (!sum)
        return 1;
    int rc = 0;
    if (serve_check(path, sum, &input, err, sizeof err) < 0) {
        log_msg(LOG_LV_ERROR, "%s", err);
        hint_missing(def, path);
        rc = input ? 2 : 1;
    } else {
        if (sum->notes[0])
            log_msg(LOG_LV_WARN, "%s", sum->notes);
        printf("%s: %zu model%s, %zu GPU%s, socket %s, state %s, logs %s\n", path, sum->nmodels,
               sum->nmodels == 1 ? "" : "s", sum->ngpus, sum->ngpus == 1 ? "" : "s", sum->socket,
               sum->state, sum->logs);
        if (sum->from_env[0])
            printf("from the environment: %s\n", sum->from_env);
        if (sum->shim[0])
            printf("libvramcap: %s\n", sum->shim);
        else
            printf("libvramcap: missing, and no model needs it now: %s\n", sum->shim_why);
        printf("vram serve would start as %s: nothing stands in its way\n", def->user ? "you" : "root");
    }
    free(sum);
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
    log_init("vram serve", max);
    if (check) {
        int rc = check_config(&def, path);
        fflush(stderr);
        return rc;
    }
    char err[600];
    if (serve_run(path, err, sizeof err) < 0) {
        log_msg(LOG_LV_ERROR, "%s", err);
        hint_missing(&def, path);
        fflush(stderr);
        return 1;
    }
    return 0;
}
