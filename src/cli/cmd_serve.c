/* cmd_serve: `vram serve`, the daemon that runs many models on limited VRAM:
 * each model its own process, started on demand, suspended to host RAM
 * when another needs the room. --check validates a configuration. */
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

struct serve_opts {
    const char *config;
    bool check, verbose, quiet;
};

static int cmd_serve(const void *opts, int argc, char **argv);

#define O struct serve_opts
static const struct cmd_opt serve_opts[] = {
    {"config", 'c', CMD_STRING(O, config), .arg = "FILE",
     .help = "the configuration (default $VRAM_CONFIG, else /etc/vram/vram.conf as root, else "
             "$XDG_CONFIG_HOME/vram/vram.conf)"},
    {"check", 0, CMD_FLAG(O, check),
     .help = "do all that vram serve does before it runs a model, as you, and exit: the "
             "configuration, libvramcap, the folders of the socket, state and logs, the GPUs, "
             "the addresses (fails exactly when vram serve would); and what each model's "
             "command needs (its program on PATH, its model file, docker's daemon), which "
             "vram serve only warns of"},
    {"verbose", 'v', CMD_FLAG(O, verbose), .help = "log debugging detail too"},
    {"quiet", 'q', CMD_FLAG(O, quiet),
     .help = "log warnings and errors only (not each model's start, suspend and resume, nor "
             "each proxied request)"},
    {NULL},
};
#undef O

const struct cmd_entry cmd_serve_entry = {
    .name = "serve",
    .args = "[--config FILE] [--check] [--verbose|--quiet]",
    .summary = "run many models on limited VRAM: start on demand, suspend idle ones to RAM",
    .opts = serve_opts,
    .help = "Each [model NAME] section gives a command (with ${PORT}), its VRAM (a size,\n"
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
    .size = sizeof(struct serve_opts),
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
        for (char *l = sum->problems, *e; *l; l = e + 1) {
            e = strchr(l, '\n');
            log_msg(LOG_LV_ERROR, "%.*s", e ? (int)(e - l) : (int)strlen(l), l);
            if (!e)
                break;
        }
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
        if (sum->users[0])
            printf("models run as %s\n", sum->users);
        printf("vram serve would start as %s: nothing stands in its way\n", def->user ? "you" : "root");
    }
    free(sum);
    return rc;
}

static int cmd_serve(const void *opts, int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct serve_opts *o = opts;
    if (o->verbose && o->quiet)
        return cmd_bad_usage(&cmd_serve_entry, "--verbose or --quiet, not both");
    const char *path = o->config ? o->config : getenv("VRAM_CONFIG");
    enum log_level max = o->verbose ? LOG_LV_DEBUG : o->quiet ? LOG_LV_WARN : LOG_LV_INFO;
    bool check = o->check;
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
