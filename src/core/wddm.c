/* wddm: the "GPU Process Memory" counters' figures joined to NVML's list.
 *
 * NVML on a WDDM card lists the processes that use it (dwm.exe, explorer,
 * browsers, CUDA programs) but gives each "not available" as its memory.
 * Windows counts the same memory per process and adapter, in the counters
 * Task Manager reads. What this file does not do: invent a figure. A
 * process the counters do not name stays "n/a", and an adapter that cannot
 * be told apart from another is left alone. */
#include "core/wddm.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* digits of base (10 or 16) at *p; -1 unless at least one and no overflow */
static int number(const char **p, int base, uint64_t max, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    int n = 0;
    for (;; s++, n++) {
        int d;
        if (*s >= '0' && *s <= '9')
            d = *s - '0';
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = *s - 'a' + 10;
        else if (base == 16 && *s >= 'A' && *s <= 'F')
            d = *s - 'A' + 10;
        else
            break;
        if (v > (max - (uint64_t)d) / (uint64_t)base)
            return -1;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (!n)
        return -1;
    *p = s;
    *out = v;
    return 0;
}

static bool lit(const char **p, const char *word)
{
    size_t n = strlen(word);
    if (strncmp(*p, word, n))
        return false;
    *p += n;
    return true;
}

int wddm_parse_instance(const char *name, uint32_t *pid, uint64_t *luid)
{
    const char *p = name;
    uint64_t v, hi, lo, phys;
    if (!lit(&p, "pid_") || number(&p, 10, 0xFFFFFFFFu, &v) || !lit(&p, "_luid_0x") ||
        number(&p, 16, 0xFFFFFFFFu, &hi) || !lit(&p, "_0x") || number(&p, 16, 0xFFFFFFFFu, &lo) ||
        !lit(&p, "_phys_") || number(&p, 10, 0xFFFF, &phys) || *p)
        return -1;
    if (v == 0)
        return -1; /* the idle process holds no GPU memory of its own */
    *pid = (uint32_t)v;
    *luid = hi << 32 | lo;
    return 0;
}

void wddm_add(struct wddm_set *set, const char *instance, double bytes)
{
    uint32_t pid;
    uint64_t luid;
    /* NaN and negatives fail the first test */
    if (!(bytes >= 0) || wddm_parse_instance(instance, &pid, &luid) < 0) {
        set->rejected++;
        return;
    }
    uint64_t b = bytes >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)bytes;
    for (size_t i = 0; i < set->n; i++) {
        struct wddm_usage *u = &set->v[i];
        if (u->pid == pid && u->luid == luid) {
            u->dedicated = UINT64_MAX - u->dedicated < b ? UINT64_MAX : u->dedicated + b;
            return;
        }
    }
    if (set->n == WDDM_MAX) {
        set->rejected++;
        return;
    }
    set->v[set->n++] = (struct wddm_usage){pid, luid, b};
}

static const struct wddm_usage *find(const struct wddm_set *set, uint32_t pid, uint64_t luid)
{
    for (size_t i = 0; i < set->n; i++)
        if (set->v[i].pid == pid && set->v[i].luid == luid)
            return &set->v[i];
    return NULL;
}

uint64_t wddm_luid_of(const struct snap_gpu *g, const struct wddm_set *set)
{
    uint64_t best = 0;
    size_t best_n = 0;
    bool tie = false;
    for (size_t i = 0; i < set->n; i++) {
        uint64_t luid = set->v[i].luid;
        bool seen = false; /* each LUID is scored once, at its first entry */
        for (size_t j = 0; j < i && !seen; j++)
            seen = set->v[j].luid == luid;
        if (seen)
            continue;
        size_t n = 0;
        for (size_t k = 0; k < g->nprocs; k++) {
            const struct wddm_usage *u = find(set, g->procs[k].pid, luid);
            n += u && u->dedicated > 0;
        }
        if (n > best_n) {
            best = luid, best_n = n, tie = false;
        } else if (n && n == best_n) {
            tie = true;
        }
    }
    return tie ? 0 : best;
}

size_t wddm_apply(struct snap_gpu *g, const struct wddm_set *set, uint64_t luid)
{
    size_t given = 0;
    for (size_t k = 0; luid && k < g->nprocs; k++) {
        struct snap_proc *p = &g->procs[k];
        if (p->used_known)
            continue;
        const struct wddm_usage *u = find(set, p->pid, luid);
        if (!u)
            continue;
        p->used = u->dedicated;
        p->used_known = true;
        p->used_wddm = true;
        given++;
    }
    return given;
}
