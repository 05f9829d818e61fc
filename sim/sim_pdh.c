/* sim_pdh: a simulated pdh.dll for the Windows tests: Windows's performance
 * counters answered from a recorded counter set, the CSV that
 *   typeperf "\GPU Process Memory(*)\Dedicated Usage" -sc 1 -o FILE.csv
 * writes on a real machine (VRAM_SIM_PDH names it). The entry points vram
 * uses, with PDH's conventions: a wildcard instance, PDH_MORE_DATA with the
 * size needed, names stored after the items in the caller's buffer. The
 * first row of values is the sample. Without VRAM_SIM_PDH, no counter set
 * exists, as on a Windows before 10 1709. */
#include <windows.h>

#include <pdh.h>
#include <pdhmsg.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define EXPORT __declspec(dllexport)

struct column {
    char object[128], instance[128], counter[128];
    char value[64];
};

struct query {
    struct column *cols;
    size_t ncols;
    void *counters[16]; /* freed with the query, as PDH does */
    size_t ncounters;
};

struct counter {
    struct query *q;
    char object[128], counter[128];
};

/* One quoted CSV field at *p into out; 0, or -1 at the end of the line. */
static int field(const char **p, char *out, size_t len)
{
    const char *s = *p;
    size_t n = 0;
    if (*s == ',')
        s++;
    if (*s != '"')
        return -1;
    for (s++; *s && *s != '"'; s++)
        if (n + 1 < len)
            out[n++] = *s;
    out[n] = '\0';
    if (*s != '"')
        return -1;
    *p = s + 1;
    return 0;
}

/* "\\HOST\Object(instance)\Counter", the host optional. */
static int split_path(const char *path, struct column *c)
{
    const char *s = path;
    if (!strncmp(s, "\\\\", 2)) {
        s = strchr(s + 2, '\\');
        if (!s)
            return -1;
    }
    if (*s++ != '\\')
        return -1;
    const char *open = strchr(s, '('), *close = strrchr(s, ')');
    if (!open || !close || close < open || close[1] != '\\')
        return -1;
    snprintf(c->object, sizeof c->object, "%.*s", (int)(open - s), s);
    snprintf(c->instance, sizeof c->instance, "%.*s", (int)(close - open - 1), open + 1);
    snprintf(c->counter, sizeof c->counter, "%s", close + 2);
    return 0;
}

static int load(struct query *q)
{
    const char *path = getenv("VRAM_SIM_PDH");
    FILE *f = path && *path ? fopen(path, "rb") : NULL;
    if (!f)
        return -1;
    static char head[1 << 16], row[1 << 16];
    if (!fgets(head, sizeof head, f) || !fgets(row, sizeof row, f)) {
        fclose(f);
        return -1;
    }
    fclose(f);
    const char *h = head, *r = row;
    char buf[512];
    /* the first column is the sample's time */
    if (field(&h, buf, sizeof buf) < 0 || field(&r, buf, sizeof buf) < 0)
        return -1;
    while (field(&h, buf, sizeof buf) == 0) {
        struct column c;
        memset(&c, 0, sizeof c);
        if (split_path(buf, &c) < 0 || field(&r, c.value, sizeof c.value) < 0)
            return -1;
        struct column *v = realloc(q->cols, (q->ncols + 1) * sizeof *v);
        if (!v)
            return -1;
        q->cols = v;
        q->cols[q->ncols++] = c;
    }
    return 0;
}

EXPORT PDH_STATUS WINAPI PdhOpenQueryW(LPCWSTR source, DWORD_PTR user, PDH_HQUERY *out)
{
    (void)source, (void)user;
    struct query *q = calloc(1, sizeof *q);
    if (!q || !out) {
        free(q);
        return PDH_INVALID_ARGUMENT;
    }
    load(q); /* no recording: a machine without counters */
    *out = q;
    return ERROR_SUCCESS;
}

EXPORT PDH_STATUS WINAPI PdhAddEnglishCounterW(PDH_HQUERY hq, LPCWSTR wpath, DWORD_PTR user,
                                               PDH_HCOUNTER *out)
{
    (void)user;
    struct query *q = hq;
    char path[512];
    struct column want;
    if (!q || !wpath || !out ||
        WideCharToMultiByte(CP_UTF8, 0, wpath, -1, path, sizeof path, NULL, NULL) <= 0 ||
        split_path(path, &want) < 0)
        return PDH_INVALID_ARGUMENT;
    bool any = false;
    for (size_t i = 0; i < q->ncols && !any; i++)
        any = !_stricmp(q->cols[i].object, want.object);
    if (!any)
        return PDH_CSTATUS_NO_OBJECT;
    struct counter *c = q->ncounters < 16 ? calloc(1, sizeof *c) : NULL;
    if (!c)
        return PDH_MEMORY_ALLOCATION_FAILURE;
    q->counters[q->ncounters++] = c;
    c->q = q;
    snprintf(c->object, sizeof c->object, "%s", want.object);
    snprintf(c->counter, sizeof c->counter, "%s", want.counter);
    *out = c;
    return ERROR_SUCCESS;
}

EXPORT PDH_STATUS WINAPI PdhCollectQueryData(PDH_HQUERY hq)
{
    return hq ? ERROR_SUCCESS : PDH_INVALID_HANDLE;
}

static bool matches(const struct counter *c, const struct column *col)
{
    return !_stricmp(col->object, c->object) && !_stricmp(col->counter, c->counter);
}

EXPORT PDH_STATUS WINAPI PdhGetFormattedCounterArrayW(PDH_HCOUNTER hc, DWORD fmt, LPDWORD size,
                                                      LPDWORD count,
                                                      PPDH_FMT_COUNTERVALUE_ITEM_W items)
{
    struct counter *c = hc;
    if (!c || !size || !count)
        return PDH_INVALID_ARGUMENT;
    size_t n = 0, names = 0;
    for (size_t i = 0; i < c->q->ncols; i++)
        if (matches(c, &c->q->cols[i])) {
            n++;
            names += (strlen(c->q->cols[i].instance) + 1) * sizeof(wchar_t);
        }
    DWORD need = (DWORD)(n * sizeof *items + names);
    if (!items || *size < need) {
        *size = need;
        *count = (DWORD)n;
        return n ? PDH_MORE_DATA : ERROR_SUCCESS;
    }
    wchar_t *str = (wchar_t *)(items + n);
    size_t k = 0;
    for (size_t i = 0; i < c->q->ncols; i++) {
        const struct column *col = &c->q->cols[i];
        if (!matches(c, col))
            continue;
        PDH_FMT_COUNTERVALUE_ITEM_W *it = &items[k++];
        memset(it, 0, sizeof *it);
        int w = MultiByteToWideChar(CP_UTF8, 0, col->instance, -1, str,
                                    (int)(strlen(col->instance) + 1));
        it->szName = str;
        str += w > 0 ? w : 0;
        char *end;
        double v = strtod(col->value, &end);
        /* typeperf writes " " for a value it could not read */
        if (end == col->value) {
            it->FmtValue.CStatus = PDH_CSTATUS_INVALID_DATA;
        } else if (fmt & PDH_FMT_LARGE) {
            it->FmtValue.largeValue = (LONGLONG)v;
        } else {
            it->FmtValue.doubleValue = v;
        }
    }
    *count = (DWORD)k;
    return ERROR_SUCCESS;
}

EXPORT PDH_STATUS WINAPI PdhCloseQuery(PDH_HQUERY hq)
{
    struct query *q = hq;
    if (!q)
        return PDH_INVALID_HANDLE;
    for (size_t i = 0; i < q->ncounters; i++)
        free(q->counters[i]);
    free(q->cols);
    free(q);
    return ERROR_SUCCESS;
}
