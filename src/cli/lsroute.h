/* lsroute: which of llama-swap's models run together, as its file says
 * it: the groups (at the top, as older files have them, or under
 * routing.router.settings with use: group, llama-swap's default), the
 * matrix (use: matrix), and routing.scheduler's priorities; each checked
 * as llama-swap checks it (a model in two groups, both styles at once, an
 * unknown router or scheduler are errors there and here). */
#ifndef VRAM_CLI_LSROUTE_H
#define VRAM_CLI_LSROUTE_H

#include <yaml.h>

#include "cli/lsconf.h"
#include "cli/lsyaml.h"

/* Reads top's groups:, matrix: and routing: into c (its models read
 * already): each group's members to their models, c->matrix, each
 * model's priority. Errors through y. */
void lsroute_read(struct lsyaml *y, struct lsconf *c, yaml_node_t *top);

#endif
