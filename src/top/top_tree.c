/* top_tree: nesting the process list.
 *
 * Each GPU process walks up its parents (from the host: probe_host) until
 * one is also on a GPU, or init. A parent on no GPU is shown only where
 * two or more branches meet in it: a chain of shells and launchers above a
 * single job says nothing the command line does not, while the server
 * above its workers does. The walks are bounded (TOP_TREE_DEPTH), and a
 * loop in the parents (a process tree changing under the walk) ends it. */
#include "top/top_tree.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NONE ((size_t)-1)

struct walk {
    top_host_fn host;
    void *ctx;
    struct snap_proc *anc; /* the parents looked up, each once */
    bool *anc_ok;
    size_t nanc, cap;
};

struct pair {
    uint32_t at, child; /* a parent on no GPU, and the branch through it */
};

static size_t gpu_node(const struct top_row *rows, size_t n, uint32_t pid)
{
    for (size_t i = 0; i < n; i++)
        if (rows[i].proc.pid == pid)
            return i;
    return NONE;
}

static const struct snap_proc *ancestor(struct walk *w, uint32_t pid)
{
    for (size_t k = 0; k < w->nanc; k++)
        if (w->anc[k].pid == pid)
            return w->anc_ok[k] ? &w->anc[k] : NULL;
    if (w->nanc == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 32;
        struct snap_proc *a = realloc(w->anc, cap * sizeof *a);
        if (!a)
            return NULL;
        w->anc = a;
        bool *ok = realloc(w->anc_ok, cap * sizeof *ok);
        if (!ok)
            return NULL;
        w->anc_ok = ok;
        w->cap = cap;
    }
    struct snap_proc *p = &w->anc[w->nanc];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    w->anc_ok[w->nanc] = w->host(w->ctx, p) == 0 && p->host_known;
    return w->anc_ok[w->nanc++] ? p : NULL;
}

static int pair_cmp(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->child < y->child ? -1 : x->child > y->child;
}

/* The tree being put in order. */
struct tree {
    const struct top_row *rows;
    size_t n, nodes;
    const struct snap_proc *const *ctx; /* nodes n.. : the joining parents */
    size_t *parent, *key;
    bool *seen;
    struct top_row *out;
    size_t nout;
};

static void emit(struct tree *t, size_t node, unsigned depth, uint32_t more)
{
    t->seen[node] = true;
    struct top_row *r = &t->out[t->nout++];
    if (node < t->n) {
        *r = t->rows[node];
    } else {
        memset(r, 0, sizeof *r);
        r->proc = *t->ctx[node - t->n];
        r->context = true;
    }
    r->depth = depth;
    r->more = more;
    /* the children, in the order of their keys; the last has no "more" */
    size_t last = NONE;
    for (size_t c = 0; c < t->nodes; c++)
        if (!t->seen[c] && t->parent[c] == node && (last == NONE || t->key[c] > t->key[last]))
            last = c;
    unsigned d = depth < TOP_TREE_DEPTH ? depth + 1 : depth;
    for (;;) {
        size_t next = NONE;
        for (size_t c = 0; c < t->nodes; c++)
            if (!t->seen[c] && t->parent[c] == node && (next == NONE || t->key[c] < t->key[next]))
                next = c;
        if (next == NONE)
            break;
        uint32_t m = more & ~(1u << (d - 1));
        if (next != last)
            m |= 1u << (d - 1);
        emit(t, next, d, m);
    }
}

int top_tree_build(const struct top_row *rows, size_t n, top_host_fn host, void *hctx,
                   struct top_row **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    struct walk w = {host, hctx, NULL, NULL, 0, 0};
    uint32_t(*path)[TOP_TREE_DEPTH] = calloc(n ? n : 1, sizeof *path);
    size_t *npath = calloc(n ? n : 1, sizeof *npath), *gparent = calloc(n ? n : 1, sizeof *gparent);
    struct pair *pairs = calloc(n * TOP_TREE_DEPTH + 1, sizeof *pairs);
    int rc = -1;
    size_t np = 0, nj = 0;
    uint32_t *joins = NULL;
    const struct snap_proc **ctx = NULL;
    struct tree t = {.rows = rows, .n = n};
    if (!path || !npath || !gparent || !pairs)
        goto out;

    /* each process's parents on no GPU, up to one on a GPU (gparent) */
    for (size_t i = 0; i < n; i++) {
        const struct snap_proc *p = &rows[i].proc;
        uint32_t ppid = p->host_known ? p->ppid : 0;
        gparent[i] = NONE;
        for (int d = 0; d < TOP_TREE_DEPTH && ppid > 1 && ppid != p->pid; d++) {
            size_t g = gpu_node(rows, n, ppid);
            if (g != NONE) {
                gparent[i] = g;
                break;
            }
            bool loop = false; /* a parent met twice: the tree changed under the walk */
            for (size_t k = 0; k < npath[i]; k++)
                loop |= path[i][k] == ppid;
            const struct snap_proc *a = host && !loop ? ancestor(&w, ppid) : NULL;
            if (!a)
                break;
            path[i][npath[i]++] = ppid;
            pairs[np++] = (struct pair){ppid, npath[i] == 1 ? p->pid : path[i][npath[i] - 2]};
            ppid = a->ppid;
        }
    }
    /* the parents where two branches or more meet */
    qsort(pairs, np, sizeof *pairs, pair_cmp);
    if (!(joins = calloc(np + 1, sizeof *joins)))
        goto out;
    for (size_t i = 0; i < np;) {
        size_t j = i, distinct = 0;
        for (; j < np && pairs[j].at == pairs[i].at; j++)
            distinct += j == i || pairs[j].child != pairs[j - 1].child;
        if (distinct >= 2)
            joins[nj++] = pairs[i].at;
        i = j;
    }
    t.nodes = n + nj;
    t.parent = calloc(t.nodes + 1, sizeof *t.parent);
    t.key = calloc(t.nodes + 1, sizeof *t.key);
    t.seen = calloc(t.nodes + 1, sizeof *t.seen);
    t.out = calloc(t.nodes + 1, sizeof *t.out);
    ctx = calloc(nj + 1, sizeof *ctx);
    if (!t.parent || !t.key || !t.seen || !t.out || !ctx)
        goto out;
    for (size_t j = 0; j < nj; j++)
        ctx[j] = ancestor(&w, joins[j]); /* looked up already: never NULL */
    t.ctx = ctx;
    for (size_t k = 0; k < t.nodes; k++)
        t.parent[k] = NONE, t.key[k] = k < n ? k : (size_t)-2;

    /* a node's parent: the first joining parent up its path, else the GPU
     * process the path ends at; a joining parent's, the next one up (the
     * path above it is the same from every row through it) */
    for (size_t i = 0; i < n; i++) {
        size_t below = i;
        for (size_t k = 0; k < npath[i]; k++)
            for (size_t j = 0; j < nj; j++)
                if (path[i][k] == joins[j]) {
                    t.parent[below] = n + j;
                    below = n + j;
                }
        t.parent[below] = gparent[i];
    }
    /* a node sorts where its first descendant does */
    for (size_t i = 0; i < n; i++)
        for (size_t k = t.parent[i], steps = 0; k != NONE && steps < t.nodes;
             k = t.parent[k], steps++)
            if (t.key[k] > i)
                t.key[k] = i;
    /* roots in order, then whatever a loop of parents left out */
    for (int pass = 0; pass < 2; pass++)
        for (;;) {
            size_t next = NONE;
            for (size_t k = 0; k < t.nodes; k++)
                if (!t.seen[k] && (pass || t.parent[k] == NONE) &&
                    (next == NONE || t.key[k] < t.key[next]))
                    next = k;
            if (next == NONE)
                break;
            emit(&t, next, 0, 0);
        }
    *out = t.out;
    *nout = t.nout;
    t.out = NULL;
    rc = 0;
out:
    free(path);
    free(npath);
    free(gparent);
    free(pairs);
    free(joins);
    free(ctx);
    free(t.parent);
    free(t.key);
    free(t.seen);
    free(t.out);
    free(w.anc);
    free(w.anc_ok);
    return rc;
}
