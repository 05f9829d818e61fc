/* lsyaml: reading llama-swap's YAML document for vram import (libyaml's
 * document API): a node's text, a mapping's value (merge keys followed, as
 * Go's YAML library follows them), lists, numbers and booleans, each value
 * with llama-swap's macros expanded (as its config.go expands them now:
 * in every value of the file, a model's own over the file's), and the
 * first error, said with where it is in the file (models.ID.cmd). */
#ifndef VRAM_CLI_LSYAML_H
#define VRAM_CLI_LSYAML_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "cli/lsconf.h"
#include "cli/lsmacro.h"

struct lsyaml {
    yaml_document_t *doc;
    char *err; /* the first error; "" while none */
    size_t errlen;
    struct lsmacros mac;
    size_t looks; /* the keys looked at so far, merges followed: LSYAML_MAX_LOOKS at most */
};

/* An alias is a reference, so a few hundred bytes of <<: lists, each
 * naming the one before eight times, ask for 8^8 looks per key (minutes
 * of CPU, issue 42 item 7); a real file asks for a few hundred thousand. */
#define LSYAML_MAX_LOOKS 4000000

void lsyaml_fail(struct lsyaml *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A note (what has no equivalent) into l; the first LSCONF_MAX_LIST only. */
void lsyaml_note(struct lsyaml *r, struct lsconf_list *l, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

yaml_node_t *lsyaml_node(struct lsyaml *r, int id);

/* A scalar's text, or NULL (not a scalar, or a NUL inside it). */
const char *lsyaml_scalar(const yaml_node_t *n);

/* map[key], merge keys followed; NULL when absent (or map is no mapping). */
yaml_node_t *lsyaml_get(struct lsyaml *r, yaml_node_t *map, const char *key);

/* The keys of map that are not in known (NULL-ended): a note each. */
void lsyaml_unknown(struct lsyaml *r, yaml_node_t *map, const char *const *known,
                    struct lsconf_list *notes, const char *where);

/* text with the macros expanded for the model id (NULL: the file's
 * macros only), ${PID} kept when pid: malloc'd, or NULL with the error. */
char *lsyaml_expand(struct lsyaml *r, const char *text, const char *id, bool pid,
                    const char *where);

/* A scalar, macros expanded, as a number from lo to hi / as true or false:
 * false with the error otherwise. */
bool lsyaml_long(struct lsyaml *r, yaml_node_t *n, const char *id, const char *where, long lo,
                 long hi, long *out);
bool lsyaml_bool(struct lsyaml *r, yaml_node_t *n, const char *id, const char *where, bool *out);

/* A list of text (one text is a list of one), each macros expanded, into
 * l. An entry that is a mapping is taken by its key id when ids (the
 * shape some write aliases in: {id: NAME, name: ...}), its other keys
 * noted in notes. */
void lsyaml_list(struct lsyaml *r, yaml_node_t *n, struct lsconf_list *l, const char *id,
                 const char *where, bool ids, struct lsconf_list *notes);

#endif
