/* config: `vram serve`'s INI file, read with inih and checked whole before
 * anything uses it, with file:line in every message. A reload that fails
 * leaves the running configuration as it was. */
#ifndef VRAM_DAEMON_CONFIG_H
#define VRAM_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/modelname.h"
#include "core/sched.h"
#include "conf/keys.h"
#include "host/runas.h"

#define CONFIG_MAX_MODELS 64
#define CONFIG_CMD_MAX    1024
#define CONFIG_PATH_MAX   512
#define CONFIG_ALIASES    8    /* other names a model answers to */
#define CONFIG_ENV_MAX    1024 /* its env = KEY=VALUE ... entries, packed */

/* What a model's backend speaks: the proxy translates the other. */
enum config_api {
    CONFIG_API_OPENAI, /* /v1/... only (llama-server, vLLM, SGLang, LocalAI) */
    CONFIG_API_OLLAMA, /* /api/... only */
    CONFIG_API_BOTH,   /* both: every request passes through as it is */
};
#define CONFIG_MAX_QUEUE  1024      /* max_queue's largest (core/sched.h's queue holds it) */
#define CONFIG_SPILL_OFF  "\x01"     /* spill = no, until the defaults are settled */

struct config_model {
    char name[MODELNAME_MAX]; /* core/modelname.h's rules */
    char command[CONFIG_CMD_MAX]; /* run by /bin/sh -c, ${PORT} filled in */
    char file[CONFIG_PATH_MAX];   /* the model file, for vram = auto */
    uint64_t vram;                /* 0: auto */
    unsigned vram_line;           /* where vram = is, for messages */
    uint32_t gpus;                /* the GPUs it may use, a bit each; 0: any */
    unsigned width;               /* how many it spans at once (all or none) */
    unsigned gpus_line;           /* where gpu = or gpus = is (0: not given), for messages */
    double keep_alive_s;          /* unused this long: evicted; < 0: forever */
    enum sched_evict evict;
    int priority;
    bool pinned;
    bool cap;          /* run it under libvramcap with vram as its slice */
    bool fast;         /* fast swap: run it under libvramcap with VRAM_SWAP=1 */
    char swap_pool[8]; /* libvramcap's host pool policy: keep, none, eager */
    char health[128];
    double start_timeout_s;
    unsigned concurrency; /* proxied requests at once, 0: no limit */
    int preempt;          /* -1: where fast swap can (the default), 0: never, 1: yes */
    double slice_s;       /* the GPU for at least this long before it may be preempted */
    enum config_api api;
    bool api_set; /* else guessed from the command (ollama: Ollama's, the rest OpenAI's) */
    char aliases[CONFIG_ALIASES][MODELNAME_MAX];
    unsigned naliases;
    /* KEY=VALUE entries for its process, each NUL-terminated, one after
     * another; nenv of them */
    char env[CONFIG_ENV_MAX];
    size_t env_len;
    unsigned nenv;
    char api_key[128];    /* sent to its server as Authorization: Bearer, "" for none */
    /* found in a store by discover = (daemon/discover.c): the store, "" for
     * a [model] section; the context a request asked for, 0: the default */
    char source[16];
    /* a discovered model: file[0..store_len) is its store's real root, the
     * rest the file's path beneath it, which is opened there (no link
     * followed) at each start and handed to its server (daemon/modelfd.c) */
    unsigned store_len;
    unsigned ctx;
    bool keep_alive_set;  /* else [serve]'s keep_alive */
    char stop[CONFIG_CMD_MAX]; /* run by /bin/sh -c to stop it (${PORT}, ${PID}); "": signals */
    double stop_timeout_s;     /* then SIGTERM; SIGKILL as long again after */
    char upstream_name[256];   /* the model's name sent to its server; "": its name */
    /* who it runs as (user =, group =; "": [serve]'s, else the default,
     * conf/confuser.h), and that user resolved by confuser_resolve */
    char user[RUNAS_NAME];
    char group[RUNAS_NAME];
    struct runas run;
};

struct config {
    char path[CONFIG_PATH_MAX];
    char socket[CONFIG_PATH_MAX];
    unsigned socket_line;            /* where socket = is; 0: the default */
    char state[CONFIG_PATH_MAX];     /* the SQLite file */
    char logs[CONFIG_PATH_MAX];      /* a log file per model */
    char metrics[128];               /* HOST:PORT for /metrics, "" for none */
    char listen[128];                /* the model proxy's HOST:PORT, "" for none */
    char ui[128]; /* the dashboard's HOST:PORT, "": listen's host, a port the kernel picks */
    char token[128];                 /* bearer token the proxy asks for, "" for none */
    struct keys keys;                /* token = and tokens =: what the proxy asks for (keys.h) */
    char origins[1024];              /* origins = (else OLLAMA_ORIGINS): other sites served, CORS */
    char hosts[512];                 /* hosts =: more names the Host may say (origins.h), * any */
    bool origins_set;                /* origins = was given: OLLAMA_ORIGINS is not read */
    uint64_t max_body;               /* largest proxied request body */
    double wait_s;                   /* how long a proxied request waits for its model */
    double client_timeout_s;         /* a proxy client idle, or slow to send, this long: closed */
    uint64_t budget[SCHED_MAX_GPUS]; /* the most models may hold on each GPU */
    bool budget_set[SCHED_MAX_GPUS];
    uint64_t margin;
    uint64_t host_budget;  /* 0: what RAM is available at start, less a margin */
    char spill[CONFIG_PATH_MAX]; /* the disk tier's folder; "" for none (spill = no) */
    uint64_t spill_budget;       /* 0: what its disk has free at start, less a margin */
    unsigned port_base;    /* model ports are taken from here up */
    double min_resident_s; /* a model is not evicted sooner after it became ready */
    bool min_resident_auto; /* ... than its own switch takes (the default) */
    bool overlap;          /* a switch moves one model out and the other in at once */
    double preempt_gap_s;  /* at most one preemption per GPU this often */
    char notes[512];       /* what the file says that still works but should change */
    /* discover = the stores whose GGUF models are served (" ollama huggingface ",
     * each between blanks; "" for none), those whose names match a pattern of
     * discover_exclude aside; llama.cpp's server runs them, context
     * discover_ctx (0: 8192) */
    char discover[64];
    char discover_exclude[512];
    char llama_server[CONFIG_PATH_MAX];
    unsigned discover_ctx;
    /* the models' defaults, and Ollama's variables (OLLAMA_KEEP_ALIVE,
     * OLLAMA_MAX_LOADED_MODELS, OLLAMA_MAX_QUEUE) where the file is silent */
    double keep_alive_s;          /* a model's keep_alive unless it says (-1: forever) */
    unsigned max_loaded;          /* models loaded at once in all; 0: no limit */
    unsigned max_loaded_gpu;      /* ... on each GPU; 0: no limit */
    unsigned max_queue;           /* proxied requests waiting at once; more get 503 */
    char from_env[200];           /* which of Ollama's variables were used, for the log */
    char user[RUNAS_NAME];        /* user = and group = in [serve]: every model's unless it says */
    char group[RUNAS_NAME];
    char preload[CONFIG_MAX_MODELS][MODELNAME_MAX]; /* started with the daemon */
    unsigned npreload;
    struct config_model models[CONFIG_MAX_MODELS];
    size_t nmodels;
};

/* A [model NAME]'s settings before the file says any. */
void config_model_defaults(struct config_model *m, const char *name);

/* Whether m runs under libvramcap: a cap, or fast swap (which suspends). */
bool config_uses_vramcap(const struct config_model *m);

/* What a model whose configuration says no api = speaks, from its command:
 * Ollama's API for `ollama ...`, OpenAI's for the rest. */
enum config_api config_guess_api(const char *command);

/* Whether each model's GPUs are there (gpu = N, gpus = 0,2, gpus = N: an
 * index under ngpus, at most ngpus spanned), whatever its vram (auto too),
 * and its vram fits on as many of the GPUs it may use as it spans
 * (holds[g]: what GPU g holds for models, its memory less the driver's
 * reserve and the margin, or its budget when that is less). gpus_said
 * names the GPUs there are ("GPU 0 (NVIDIA RTX 4090)"). 0, or -1 with err
 * "FILE:LINE: ..." naming the first model that never could. */
int config_check_sizes(const struct config *c, const uint64_t *holds, size_t ngpus,
                       const char *gpus_said, char *err, size_t len);

/* Whether the daemon may take socket = PATH: nothing there, or a socket
 * of this user's (one a daemon left; whether one still answers there is
 * api.c's to find out). Anything else would have to be removed: 0, or -1
 * with err "FILE:LINE: ..." and the fix. */
int config_check_socket(const struct config *c, char *err, size_t len);

/* The line of name = in [section] of text (name NULL: the section's own
 * line), for messages; 0 if not found. */
unsigned config_line_of(const char *text, const char *section, const char *name);

/* Reads and checks path: a regular file (not a FIFO, a device...) under
 * CONFTEXT_MAX_BYTES, owned by root or this user, writable by no one else.
 * Returns 0, or -1 with err "FILE:LINE: what, and the fix". */
int config_load(const char *path, struct config *c, char *err, size_t len);
/* The same from text already read (path names it in messages). */
int config_parse(const char *text, const char *path, struct config *c, char *err, size_t len);
/* The state file path's daemon keeps (its [serve] state =, else the
 * default), read from the same trusted file without loading the rest:
 * what `vram status` and top ask of two files whenever a GPU process may
 * be a model, where a whole load (a 400 KB struct config zeroed) cost
 * more than the driver's answers. 0, or -1 if path cannot be read. */
int config_state_of(const char *path, char *out, size_t len);
/* The same from text already read (tests/fuzz/fuzz_config.c holds it to
 * config_parse's answer). */
void config_state_in(const char *text, char *out, size_t len);

#endif
