/* clockcache: each GPU's maximum clocks in the user's cache.
 *
 * nvmlDeviceGetMaxClockInfo costs 3.4 ms for the SM clock and 1.6 ms for
 * memory's on an H100 (bench/RESULTS.md, issue 46), the largest part of a
 * first sample's slow tier, and the answer is a property of the card under
 * a driver: it changes with neither load nor settings (applications
 * clocks and locks change the current clocks, not these). One line per
 * GPU: "DRIVER UUID SM_MHZ MEM_MHZ". A file that does not parse, or names
 * another driver, is asked again and written anew. */
#include "probe/clockcache.h"

#include <stdio.h>
#include <string.h>

#include "host/usercache.h"

#define CLOCKCACHE_FILE "max-clocks"
/* 8 GPUs' lines and room to spare; a machine of more is asked each time */
#define CLOCKCACHE_TEXT 2048

static bool fill_one(const char *text, const char *driver, struct snap_gpu *g)
{
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        char l[256], drv[32], uuid[96];
        unsigned sm, mem;
        if (n < sizeof l) {
            memcpy(l, line, n);
            l[n] = '\0';
            if (sscanf(l, "%31s %95s %u %u", drv, uuid, &sm, &mem) == 4 && !strcmp(drv, driver) &&
                !strcmp(uuid, g->uuid) && sm > 0 && sm < 100000 && mem > 0 && mem < 100000) {
                g->max_sm_mhz = sm;
                g->max_mem_mhz = mem;
                g->have |= SNAP_HAVE_MAX_CLOCKS;
                return true;
            }
        }
        line += n + (end != NULL);
    }
    return false;
}

bool clockcache_fill(struct snap *s)
{
    char text[CLOCKCACHE_TEXT];
    if (!s->ngpus || !strcmp(s->driver_version, "n/a") ||
        usercache_read(CLOCKCACHE_FILE, text, sizeof text) <= 0)
        return false;
    bool all = true;
    for (size_t i = 0; i < s->ngpus; i++)
        if (!s->gpus[i].uuid[0] || !fill_one(text, s->driver_version, &s->gpus[i]))
            all = false;
    return all;
}

void clockcache_save(const struct snap *s)
{
    char text[CLOCKCACHE_TEXT];
    size_t len = 0;
    if (!s->ngpus || !strcmp(s->driver_version, "n/a"))
        return;
    for (size_t i = 0; i < s->ngpus; i++) {
        const struct snap_gpu *g = &s->gpus[i];
        if (!(g->have & SNAP_HAVE_MAX_CLOCKS) || !g->uuid[0] || strchr(g->uuid, ' '))
            return;
        int n = snprintf(text + len, sizeof text - len, "%s %s %u %u\n", s->driver_version,
                         g->uuid, g->max_sm_mhz, g->max_mem_mhz);
        if (n < 0 || (size_t)n >= sizeof text - len)
            return;
        len += (size_t)n;
    }
    usercache_write(CLOCKCACHE_FILE, text);
}
