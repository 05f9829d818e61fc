/* top_cols: the process list's columns, one table: header, width, the
 * priority by which a narrow screen keeps it, and how it sorts. */
#include "top/top_cols.h"

#include <stdio.h>
#include <string.h>

#include "app/render_text.h"
#include "core/role.h"
#include "core/units.h"

enum kind { K_ID, K_NAME, K_SIZE, K_PCT };

static const struct {
    const char *name, *key;
    int width;    /* COMMAND: 0, the rest of the line */
    int priority; /* a narrow screen keeps the lowest */
    enum kind kind;
} cols[TOP_COL_COUNT] = {
    [TOP_COL_PID] = {"PID", "pid", 7, 0, K_ID},
    [TOP_COL_USER] = {"USER", "user", 8, 3, K_NAME},
    [TOP_COL_GPU] = {"GPU", "gpu", 3, 1, K_ID},
    [TOP_COL_ROLE] = {"ROLE", "role", 8, 8, K_NAME},
    [TOP_COL_TYPE] = {"TYPE", "type", 8, 9, K_NAME},
    [TOP_COL_VRAM] = {"VRAM", "vram", 9, 2, K_SIZE},
    [TOP_COL_SM] = {"SM%", "sm", 4, 4, K_PCT},
    [TOP_COL_MBW] = {"MBW%", "mbw", 4, 11, K_PCT},
    [TOP_COL_ENC] = {"ENC%", "enc", 4, 12, K_PCT},
    [TOP_COL_DEC] = {"DEC%", "dec", 4, 13, K_PCT},
    [TOP_COL_CPU] = {"CPU%", "cpu", 6, 5, K_PCT},
    [TOP_COL_RSS] = {"RSS", "rss", 9, 6, K_SIZE},
    [TOP_COL_TIME] = {"TIME", "time", 8, 7, K_SIZE},
    [TOP_COL_STATE] = {"STATE", "state", 8, 10, K_NAME},
    [TOP_COL_COMMAND] = {"COMMAND", "command", 0, 0, K_NAME},
};

#define COMMAND_MIN 16

size_t top_cols_fit(int cols_avail, bool codecs, enum top_col *out)
{
    bool on[TOP_COL_COUNT] = {false};
    int used = COMMAND_MIN;
    for (int prio = 0; prio < TOP_COL_COUNT; prio++)
        for (int c = 0; c < TOP_COL_COMMAND; c++) {
            if (cols[c].priority != prio || (!codecs && (c == TOP_COL_ENC || c == TOP_COL_DEC)))
                continue;
            if (used + cols[c].width + 1 > cols_avail)
                goto done; /* the first that does not fit ends the list: no holes */
            used += cols[c].width + 1;
            on[c] = true;
        }
done:;
    size_t n = 0;
    for (int c = 0; c < TOP_COL_COMMAND; c++)
        if (on[c])
            out[n++] = (enum top_col)c;
    out[n++] = TOP_COL_COMMAND;
    return n;
}

const char *top_col_name(enum top_col c)
{
    return c < TOP_COL_COUNT ? cols[c].name : "?";
}

const char *top_col_key(enum top_col c)
{
    return c < TOP_COL_COUNT ? cols[c].key : "?";
}

int top_col_width(enum top_col c)
{
    return c < TOP_COL_COUNT ? cols[c].width : 0;
}

bool top_col_right(enum top_col c)
{
    return c < TOP_COL_COUNT && cols[c].kind != K_NAME;
}

int top_col_parse(const char *name)
{
    /* the names of the first sorts, kept for those who typed them */
    if (!strcmp(name, "memory"))
        return TOP_COL_VRAM;
    if (!strcmp(name, "name"))
        return TOP_COL_COMMAND;
    for (int c = 0; c < TOP_COL_COUNT; c++)
        if (!strcmp(name, cols[c].key))
            return c;
    return -1;
}

const char *top_fmt_elapsed(uint64_t s, char *buf, size_t len)
{
    if (s >= 100 * 86400)
        snprintf(buf, len, "%llud", (unsigned long long)(s / 86400));
    else if (s >= 86400)
        snprintf(buf, len, "%llud%02lluh", (unsigned long long)(s / 86400),
                 (unsigned long long)(s % 86400 / 3600));
    else if (s >= 3600)
        snprintf(buf, len, "%llu:%02llu:%02llu", (unsigned long long)(s / 3600),
                 (unsigned long long)(s % 3600 / 60), (unsigned long long)(s % 60));
    else
        snprintf(buf, len, "%llu:%02llu", (unsigned long long)(s / 60),
                 (unsigned long long)(s % 60));
    return buf;
}

static const char *pct(bool known, unsigned v, char *buf, size_t len)
{
    if (!known)
        return "-";
    snprintf(buf, len, "%u", v);
    return buf;
}

static const char *short_type(unsigned types, char *buf, size_t len)
{
    render_ptype(types, buf, len);
    if (!strcmp(buf, "compute+graphics"))
        snprintf(buf, len, "C+G");
    else if (!strcmp(buf, "device-file"))
        snprintf(buf, len, "fd");
    return buf;
}

const char *top_col_cell(enum top_col c, const struct top_row *r, uint64_t now_s, char *buf,
                         size_t len)
{
    const struct snap_proc *p = &r->proc;
    bool gpu = !r->context && !r->away; /* a parent in the tree holds no GPU */
    buf[0] = '\0';
    switch (c) {
    case TOP_COL_PID:
        snprintf(buf, len, "%u", p->pid);
        return buf;
    case TOP_COL_USER:
        return p->host_known ? p->user : "?";
    case TOP_COL_GPU:
        if (!r->context && r->gpu != TOP_NO_GPU)
            snprintf(buf, len, "%u", r->gpu);
        else if (r->away)
            return "-";
        return buf;
    case TOP_COL_ROLE:
        return gpu ? role_name(p->role) : "";
    case TOP_COL_TYPE:
        return gpu ? short_type(p->types, buf, len) : "";
    case TOP_COL_VRAM:
        if (r->away)
            return "-";
        return !gpu ? "" : p->used_known ? units_fmt_size(p->used, buf, len) : "n/a";
    case TOP_COL_SM:
        return gpu ? pct(p->util_known, p->sm_util, buf, len) : "";
    case TOP_COL_MBW:
        return gpu ? pct(p->util_known, p->mem_util, buf, len) : "";
    case TOP_COL_ENC:
        return gpu ? pct(p->util_known, p->enc_util, buf, len) : "";
    case TOP_COL_DEC:
        return gpu ? pct(p->util_known, p->dec_util, buf, len) : "";
    case TOP_COL_CPU:
        if (!p->cpu_known)
            return "-";
        snprintf(buf, len, p->cpu_pct >= 999.95 ? "%.0f" : "%.1f", p->cpu_pct);
        return buf;
    case TOP_COL_RSS:
        return p->rss_known ? units_fmt_size(p->rss, buf, len) : "-";
    case TOP_COL_TIME:
        if (!p->host_known || !p->start_time || now_s < p->start_time)
            return "-";
        return top_fmt_elapsed(now_s - p->start_time, buf, len);
    case TOP_COL_STATE:
        if (r->away)
            return r->away == TOP_SUSPENDED ? "suspended" : "no GPU";
        return p->host_known ? render_pstate(p->state) : "-";
    default:
        return "";
    }
}

/* A figure to sort by, larger first; -1 for unknown, which goes last. */
static double figure(enum top_col c, const struct top_row *r)
{
    const struct snap_proc *p = &r->proc;
    bool u = p->util_known && !r->context && !r->away;
    switch (c) {
    case TOP_COL_VRAM:
        return p->used_known && !r->context && !r->away ? (double)p->used : -1;
    case TOP_COL_SM:
        return u ? p->sm_util : -1;
    case TOP_COL_MBW:
        return u ? p->mem_util : -1;
    case TOP_COL_ENC:
        return u ? p->enc_util : -1;
    case TOP_COL_DEC:
        return u ? p->dec_util : -1;
    case TOP_COL_CPU:
        return p->cpu_known ? p->cpu_pct : -1;
    case TOP_COL_RSS:
        return p->rss_known ? (double)p->rss : -1;
    case TOP_COL_TIME: /* the longest running first: the earliest start */
        return p->host_known && p->start_time ? -(double)p->start_time : -1e18;
    default:
        return 0;
    }
}

static const char *text(enum top_col c, const struct top_row *r, char *buf, size_t len)
{
    switch (c) {
    case TOP_COL_USER:
        return r->proc.host_known ? r->proc.user : "\x7f"; /* unknown last */
    case TOP_COL_ROLE:
        return role_name(r->proc.role);
    case TOP_COL_TYPE:
        return short_type(r->proc.types, buf, len);
    case TOP_COL_STATE:
        return render_pstate(r->proc.state);
    default:
        return r->proc.name[0] ? r->proc.name : "\x7f";
    }
}

int top_col_cmp(enum top_col c, const struct top_row *a, const struct top_row *b)
{
    int d = 0;
    if (c == TOP_COL_PID) {
        d = 0;
    } else if (c == TOP_COL_GPU) { /* TOP_NO_GPU: last */
        d = a->gpu == b->gpu ? 0 : a->gpu < b->gpu ? -1 : 1;
    } else if (cols[c].kind == K_NAME) {
        char x[32], y[32];
        d = strcmp(text(c, a, x, sizeof x), text(c, b, y, sizeof y));
        if (!d && c == TOP_COL_COMMAND)
            d = strcmp(a->proc.cmdline, b->proc.cmdline);
    } else {
        double x = figure(c, a), y = figure(c, b);
        d = x == y ? 0 : x < y ? 1 : -1;
    }
    if (!d)
        d = a->proc.pid == b->proc.pid ? 0 : a->proc.pid < b->proc.pid ? -1 : 1;
    if (!d)
        d = a->gpu == b->gpu ? 0 : a->gpu < b->gpu ? -1 : 1;
    return d;
}

const char *top_row_tag(const struct top_row *r, char *buf, size_t len)
{
    buf[0] = '\0';
    if (r->away == TOP_SUSPENDED)
        snprintf(buf, len, "[suspended] ");
    else if (r->away == TOP_MODEL_AWAY)
        snprintf(buf, len, "[model %s, on no GPU] ", r->proc.model);
    return buf;
}
