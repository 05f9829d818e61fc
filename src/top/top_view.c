/* top_view: the options' words, the start, and the cadence of samples. */
#include "top/top_view.h"

#include <stdio.h>
#include <string.h>

#include "top/top_keys.h"
#include "top/top_rows.h"
#include "probe/probe.h"

const struct cmd_word top_view_sorts[] = {
    {"pid", TOP_COL_PID},     {"user", TOP_COL_USER},   {"gpu", TOP_COL_GPU},
    {"role", TOP_COL_ROLE},   {"type", TOP_COL_TYPE},   {"vram", TOP_COL_VRAM},
    {"memory", TOP_COL_VRAM}, {"sm", TOP_COL_SM},       {"mbw", TOP_COL_MBW},
    {"enc", TOP_COL_ENC},     {"dec", TOP_COL_DEC},     {"cpu", TOP_COL_CPU},
    {"rss", TOP_COL_RSS},     {"time", TOP_COL_TIME},   {"state", TOP_COL_STATE},
    {"command", TOP_COL_COMMAND}, {"name", TOP_COL_COMMAND}, {NULL, 0},
};

int top_view_start(struct top *t, const struct top_view *v, const char *cmd)
{
    t->interval = v->interval;
    t->sort = (enum top_col)v->sort;
    t->reverse = v->reverse;
    t->tree = v->tree;
    if (v->filter && top_set_filter(t, v->filter) < 0) {
        fprintf(stderr, "vram %s: --%s\n", cmd, t->msg);
        return 2;
    }
    t->msg[0] = '\0';
    return 0;
}

unsigned top_view_what(struct top_cadence *c, uint64_t now, uint64_t step)
{
    unsigned what = PROBE_MEMORY | PROBE_METERS | PROBE_ACTIVITY;
    if (!c->pcie || now - c->pcie >= 1000)
        what |= PROBE_PCIE, c->pcie = now;
    if (!c->procs || now - c->procs >= 3 * step || now - c->procs >= 5000)
        what |= PROBE_PROCS, c->procs = now;
    if (!c->slow || now - c->slow >= 10000)
        what |= PROBE_SLOW, c->slow = now;
    /* the holders' scan on the probe's thread: the list takes its result
     * when it is done, the refresh never waits for it */
    if (!c->holders || now - c->holders >= 10000)
        what |= PROBE_HOLDERS_BG, c->holders = now;
    return what;
}

void top_view_took(struct top *t, unsigned what)
{
    top_hist_record(&t->hist, &t->snap);
    if (what & PROBE_PROCS)
        top_rows_rebuild(t);
    else
        top_rows_refresh(t);
}
