/* lsmacro: llama-swap's macros, as its config.go expands them:
 * ${env.NAME} in the whole file's text, then in every value the macros of
 * the file and of the model and ${MODEL_ID}; and a command's comment lines
 * taken out. Each result is bounded (LSMACRO_MAX_STRING, or four times the
 * file). */
#ifndef VRAM_CLI_LSMACRO_H
#define VRAM_CLI_LSMACRO_H

#include <stdbool.h>
#include <stddef.h>

#define LSMACRO_MAX        256         /* macros in the file, and in a model */
#define LSMACRO_MAX_STRING (64 * 1024) /* one expanded value */

struct lsmacro {
    char name[64];
    char *value; /* malloc'd, expanded with the macros defined before it */
};

struct lsmacros {
    struct lsmacro global[LSMACRO_MAX], local[LSMACRO_MAX]; /* the file's; the model's */
    size_t nglobal, nlocal;
};

/* text with ${NAME} replaced by the model's macro, else the file's (the
 * last one of that name), ${MODEL_ID} by id; ${PORT} stays, ${PID} when
 * pid (cmdStop's), ${MODEL_ID} when id is NULL (a macro of the file,
 * filled in for each model). Only [A-Za-z0-9_-]+ between the braces is a
 * macro, as llama-swap's. malloc'd, or NULL with err ("WHERE: ..."): an
 * unknown macro, or too long. */
char *lsmacro_expand(const struct lsmacros *m, const char *text, const char *id, bool pid,
                     const char *where, char *err, size_t errlen);

/* text (len bytes) with ${env.NAME} replaced by the variable wherever
 * the name is one that scan (NULL: text itself) uses: llama-swap looks in
 * the YAML's content only, so that one named in a comment need not be set.
 * A value goes in as llama-swap puts it, '\\' and '"' escaped (for a
 * "..." string). malloc'd, its length in *out_len; NULL with err for an
 * unset one, or a value with a line break. */
char *lsmacro_env(const char *text, size_t len, const char *scan, size_t max, size_t *out_len,
                  char *err, size_t errlen);

/* A command's text as llama-swap expands its macros in it: the lines
 * whose first non-blank is '#' left out, the others as they are (its
 * words are cli/lscmd.h's). malloc'd, or NULL. */
char *lsmacro_command(const char *v);

void lsmacros_free(struct lsmacros *m);

#endif
