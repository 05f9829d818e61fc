/* top_rows: top's process list made from its snapshot: every GPU's
 * processes, those the filter keeps, sorted by the chosen column (either
 * way), nested when the tree is on; the selection stays on its process. */
#ifndef VRAM_TOP_TOP_ROWS_H
#define VRAM_TOP_TOP_ROWS_H

#include "top/top_draw.h"

/* t->rows anew from t->snap. 0, or -1 when out of memory (rows kept). */
int top_rows_rebuild(struct top *t);

/* Between process lists: each row's share of its GPU from t->snap (the
 * driver's utilization samples come every refresh), the list sorted again
 * when it sorts by one of them (not in the tree: it waits for the next
 * process list, which asks the host for parents). */
void top_rows_refresh(struct top *t);

/* "sorted by cpu, reversed" into t->msg. */
void top_rows_say_sort(struct top *t);

void top_free(struct top *t);

#endif
