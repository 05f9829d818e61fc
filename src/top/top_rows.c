/* top_rows: the list, rebuilt after each process list and each change of
 * sort, filter or view. */
#include "top/top_rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* qsort has no context argument that both glibc and mingw take */
static enum top_col sort_col;
static bool sort_reverse;

static int row_cmp(const void *a, const void *b)
{
    int c = top_col_cmp(sort_col, a, b);
    return sort_reverse ? -c : c;
}

int top_rows_rebuild(struct top *t)
{
    uint32_t sel_pid = 0;
    unsigned sel_gpu = 0;
    if (t->sel < t->nrows)
        sel_pid = t->rows[t->sel].proc.pid, sel_gpu = t->rows[t->sel].gpu;
    size_t n = t->naway;
    for (size_t i = 0; i < t->snap.ngpus; i++)
        n += t->snap.gpus[i].nprocs;
    struct top_row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows)
        return -1;
    n = 0;
    t->total = 0;
    for (size_t i = 0; i < t->snap.ngpus; i++)
        for (size_t j = 0; j < t->snap.gpus[i].nprocs; j++) {
            struct top_row r = {.gpu = (unsigned)i, .proc = t->snap.gpus[i].procs[j]};
            t->total++;
            if (top_filter_match(&t->filter, &r))
                rows[n++] = r;
        }
    for (size_t i = 0; i < t->naway; i++) {
        t->total++;
        if (top_filter_match(&t->filter, &t->away[i]))
            rows[n++] = t->away[i];
    }
    sort_col = t->sort;
    sort_reverse = t->reverse;
    qsort(rows, n, sizeof *rows, row_cmp);
    if (t->tree) {
        struct top_row *nested;
        size_t nn;
        if (top_tree_build(rows, n, t->ops ? t->ops->host : NULL, t->ops ? t->ops->host_ctx : NULL,
                           &nested, &nn) < 0) {
            free(rows);
            return -1;
        }
        free(rows);
        rows = nested;
        n = nn;
    }
    free(t->rows);
    t->rows = rows;
    t->nrows = n;
    t->sel = 0;
    for (size_t i = 0; i < n; i++) /* the selection stays on its process */
        if (rows[i].proc.pid == sel_pid && (rows[i].gpu == sel_gpu || rows[i].context)) {
            t->sel = i;
            break;
        }
    return 0;
}

void top_rows_refresh(struct top *t)
{
    for (size_t i = 0; i < t->nrows; i++) {
        struct top_row *r = &t->rows[i];
        if (r->context || r->gpu >= t->snap.ngpus)
            continue;
        const struct snap_gpu *g = &t->snap.gpus[r->gpu];
        for (size_t j = 0; j < g->nprocs; j++)
            if (g->procs[j].pid == r->proc.pid) {
                r->proc.util_known = g->procs[j].util_known;
                r->proc.sm_util = g->procs[j].sm_util;
                r->proc.mem_util = g->procs[j].mem_util;
                r->proc.enc_util = g->procs[j].enc_util;
                r->proc.dec_util = g->procs[j].dec_util;
                break;
            }
    }
    bool by_share = t->sort == TOP_COL_SM || t->sort == TOP_COL_MBW || t->sort == TOP_COL_ENC ||
                    t->sort == TOP_COL_DEC;
    if (by_share && !t->tree)
        top_rows_rebuild(t);
}

void top_rows_say_sort(struct top *t)
{
    snprintf(t->msg, sizeof t->msg, "sorted by %s%s", top_col_key(t->sort),
             t->reverse ? ", reversed" : "");
}

void top_free(struct top *t)
{
    free(t->rows);
    t->rows = NULL;
    t->nrows = 0;
    free(t->away);
    t->away = NULL;
    t->naway = 0;
    top_hist_free(&t->hist);
    snap_free(&t->snap);
}
