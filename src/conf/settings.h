/* settings: every setting of vram.conf, one row each, [serve]'s and a
 * [model]'s: its name, the field it fills, its type and range, its
 * default, its own check where it needs one, when a running daemon takes
 * a change (a reload, a restart, the model's next start) and what a good
 * value is, for the messages. config.c reads the file through the rows;
 * a reload (daemon/reload.c) applies what they say it may and names, in
 * the log, each change that waits for a restart; vram.conf(5) is held to
 * them by tests/unit/test_settings.c. A new setting is a row here and its
 * field in config.h ("Adding a [serve] setting", in the architecture
 * document). */
#ifndef VRAM_CONF_SETTINGS_H
#define VRAM_CONF_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/config.h"

enum settings_section { SETTINGS_SERVE, SETTINGS_MODEL };

enum settings_type {
    SETTINGS_TEXT,     /* a char array, kept whole or refused (a value cut to fit is another) */
    SETTINGS_SIZE,     /* a uint64_t of bytes (16M), from min to max */
    SETTINGS_DURATION, /* a double of seconds (5m), from min to max */
    SETTINGS_COUNT,    /* an unsigned (or an int), digits only, from min to max */
    SETTINGS_BOOL,     /* a bool: yes/true/on/1 or no/false/off/0 */
    SETTINGS_OTHER,    /* the row's own parse */
};

/* When a running daemon takes a changed value. */
enum settings_reload {
    SETTINGS_LIVE,     /* at the reload: it is read where it is used, each time */
    SETTINGS_RESTART,  /* [serve]'s: at the daemon's next start; a reload says so in the log */
    SETTINGS_STARTS,   /* a model's: at its next start; a reload says so of a model that runs */
    SETTINGS_RESTARTS, /* a model's: the reload restarts the model (once idle) */
};

/* What a row's parse is given. */
struct settings_ctx {
    struct config *c;
    struct config_model *m; /* a [model]'s row: its model; NULL for [serve]'s */
    const char *name;       /* as the file says it (idle, for keep_alive's old name) */
    const char *text;       /* the file, for lines (config_line_of); NULL: a default */
    const char *section;
    bool *given;   /* per row (settings_rows' index): the file said it */
    char msg[400]; /* room for a message of the row's own */
};

struct settings_row {
    const char *name;
    enum settings_section section;
    size_t at, size; /* its field in struct config or config_model (or a span of fields) */
    enum settings_type type;
    const char *def; /* its default, as the file would say it; NULL: zero, or worked out by
                      * config.c (the places beside state, the XDG ones) */
    double min, max; /* SIZE, DURATION, COUNT */
    /* SETTINGS_OTHER: NULL, or the whole message of what is wrong */
    const char *(*parse)(struct settings_ctx *x, const char *v);
    enum settings_reload reload;
    const char *want; /* what a good value is, for messages (TEXT: the fix for one too long) */
    bool old;         /* an old name, still read, in no list (idle) */
};

#define SETTINGS_MAX_ROWS 128 /* settings_nrows at most (a reading's bools, one a row) */
extern const struct settings_row settings_rows[];
extern const size_t settings_nrows;

/* The row of name in section s, or NULL. */
const struct settings_row *settings_find(enum settings_section s, const char *name);

/* Sets row's field (in x->c, or x->m) from v, and marks it given: NULL, or
 * what is wrong, whole ("max_body '1': a size from 1K to 16G, like 16M"). */
const char *settings_set(const struct settings_row *row, struct settings_ctx *x, const char *v);

/* Every default of section s into c, or m (SETTINGS_MODEL). */
void settings_defaults(enum settings_section s, struct config *c, struct config_model *m);

/* The names of section s, ", " between (for "unknown setting" messages). */
void settings_names(enum settings_section s, char *out, size_t len);

/* A reload: next's [serve] settings that a reload applies, copied into
 * running; the names of those that changed but wait for a restart, ", "
 * between, into restart ("": none). */
void settings_reload(struct config *running, const struct config *next, char *restart, size_t len);

/* Whether models a and b differ in a setting that a change takes as rule
 * says (SETTINGS_STARTS, SETTINGS_RESTARTS); the names into out. */
bool settings_model_differs(const struct config_model *a, const struct config_model *b,
                            enum settings_reload rule, char *out, size_t len);

#endif
