/* top_tree: top's process list as a tree: each GPU process under its
 * parent, and a parent on no GPU shown where it joins two branches (the
 * model server whose workers hold the GPU, the shell that ran two jobs,
 * vram serve over its models). */
#ifndef VRAM_TOP_TOP_TREE_H
#define VRAM_TOP_TOP_TREE_H

#include <stddef.h>

#include "top/top_cols.h"

/* What the OS says of a process on no GPU (p->pid set by the caller): its
 * host fields, ppid first. -1 when it is not there. */
typedef int (*top_host_fn)(void *ctx, struct snap_proc *p);

/* Deepest a tree goes; deeper rows are drawn at this depth. */
#define TOP_TREE_DEPTH 24

/* rows (n, in the order they sort) as the tree's lines, into a new array
 * *out (caller frees) of *nout: children under their parent, siblings and
 * roots in the order of their first descendant in rows; depth and more set
 * for the branch lines; parents on no GPU added (context). host may be
 * NULL: then only GPU processes nest. 0, or -1 when out of memory. */
int top_tree_build(const struct top_row *rows, size_t n, top_host_fn host, void *ctx,
                   struct top_row **out, size_t *nout);

#endif
