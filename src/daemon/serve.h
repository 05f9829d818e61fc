/* serve: the entry point of `vram serve`, the daemon. What the command
 * line sees of it: no libevent, no tables. */
#ifndef VRAM_DAEMON_SERVE_H
#define VRAM_DAEMON_SERVE_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/config.h"

/* Reads config_path, serves until SIGTERM or SIGINT has stopped every
 * model: 0, or -1 with err for a daemon that could not start. */
int serve_run(const char *config_path, char *err, size_t len);

/* What vram serve --check reports of a configuration vram serve would
 * start with. */
struct serve_summary {
    size_t nmodels, ngpus;
    char socket[CONFIG_PATH_MAX], state[CONFIG_PATH_MAX], logs[CONFIG_PATH_MAX];
    char shim[1024];    /* libvramcap.so, "" when missing (and no model needs it) */
    char shim_why[600]; /* where it was looked for */
    char notes[512];    /* what the file says that still works but should change */
    char from_env[200]; /* which of Ollama's variables were used */
    char users[300];    /* who the models run as: "vram-model (3 models)", each user once */
    char problems[4096]; /* what would make models fail at their start, a line each
                            (daemon/precheck.h): --check fails on them */
    size_t nproblems;
};

/* Everything serve_run does before it runs a model, as the user who runs
 * it: the configuration, libvramcap, the folders of the socket, state and
 * logs (made as serve makes them), the state opened, the GPUs and the
 * sizes, the control socket, the proxy's and the metrics' addresses bound
 * and let go; and what each model's command needs of the host (its
 * program, its files, docker's daemon), which vram serve only warns of.
 * Nothing a running daemon owns is touched. 0 with sum filled, or -1 with
 * err, the message vram serve would fail with (or, with sum->nproblems,
 * what would make its models fail); *input says whether the configuration
 * is at fault. */
int serve_check(const char *config_path, struct serve_summary *sum, bool *input, char *err,
                size_t len);

/* libvramcap.so for the models that run under it (a cap, or fast swap):
 * its path into shim, or "" with why saying where it was looked for.
 * -1 with err naming the first model that needs it when it is missing:
 * the daemon then refuses to start, and --check fails, rather than run
 * that model without its cap or its fast swap. */
int serve_find_vramcap(const struct config *c, char *shim, size_t len, char *why, size_t wlen,
                       char *err, size_t errlen);

/* Whether each model's user (conf/confuser.h) may open what it needs:
 * -1 with err when one cannot read libvramcap (shim); a warning in the
 * log for each other file it cannot open (its start will fail, and say
 * so). */
int serve_check_users(const struct config *c, const char *shim, char *err, size_t len);

#endif
