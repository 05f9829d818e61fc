/* lsconf: llama-swap's configuration (its config.yaml) as vram import
 * reads it: the models, groups (or routing:), hooks and settings that have
 * a vram equivalent, with llama-swap's macros expanded (${env.NAME}, the
 * macros: of the file and of each model, ${MODEL_ID}; ${PORT} and
 * cmdStop's ${PID} are left for vram serve, which fills them in too), and
 * a note for everything else. Read with libyaml, bounded: the file, its nesting,
 * its nodes, the macros and what they expand to. */
#ifndef VRAM_CLI_LSCONF_H
#define VRAM_CLI_LSCONF_H

#include <stdbool.h>
#include <stddef.h>

#define LSCONF_MAX_BYTES  (1 << 20) /* a larger file is no llama-swap configuration */
#define LSCONF_MAX_MODELS 256
#define LSCONF_MAX_LIST   64 /* aliases, env entries, members, keys, preloads */

struct lsconf_list {
    char *v[LSCONF_MAX_LIST];
    size_t n;
};

struct lsconf_model {
    char *id;   /* its key under models: */
    char *cmd;  /* comment lines out, macros expanded (its words: cli/lscmd.h) */
    char *stop; /* cmdStop, the same; NULL: none */
    char *proxy, *check, *upstream, *name, *description; /* NULL: not given */
    struct lsconf_list aliases, env; /* aliases: setParamsByID's keys too */
    long ttl; /* seconds; 0: never unloaded; -1: globalTTL's (its default) */
    long unload_timeout; /* seconds; -1: not given */
    long concurrency;    /* 0: llama-swap's default */
    long priority;       /* vram's, from routing.scheduler's; -1: not given */
    bool unlisted;
    int group; /* index in groups, -1: none */
    struct lsconf_list notes; /* "filters: ..." what of it has no equivalent */
};

struct lsconf_group {
    char *name;
    bool swap, exclusive, persistent;
    struct lsconf_list members;
};

struct lsconf {
    struct lsconf_model models[LSCONF_MAX_MODELS];
    size_t nmodels;
    struct lsconf_group groups[LSCONF_MAX_LIST];
    size_t ngroups;
    struct lsconf_list preload, keys; /* hooks.on_startup.preload; apiKeys */
    long health_timeout; /* healthCheckTimeout, seconds; -1: not given */
    long start_port;     /* -1: not given */
    long global_ttl;     /* globalTTL, seconds; 0 (its default): never */
    long unload_timeout; /* -1: not given */
    bool matrix;         /* a matrix (its sets are notes): matrix:, or routing's use: matrix */
    struct lsconf_list notes; /* the file's settings with no equivalent */
};

/* Reads text (len bytes) into c (zeroed first). 0, or -1 with err ("WHERE:
 * what", WHERE a path in the file such as models.llama.cmd). Notes are
 * not errors. lsconf_free after either. */
int lsconf_read(const char *text, size_t len, struct lsconf *c, char *err, size_t errlen);

void lsconf_free(struct lsconf *c);

#endif
