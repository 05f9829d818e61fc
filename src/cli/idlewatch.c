/* idlewatch: which processes did no GPU work for a while.
 *
 * The driver keeps only a few seconds of per-process utilization samples,
 * so "idle for ten minutes" cannot be read from it after the fact: vram
 * watches for that long, reading the samples every second. The first read
 * takes everything the driver still has, so recent work counts too. */
#include "cli/idlewatch.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "host/clock.h"
#include "core/units.h"

int idlewatch_run(struct probe *p, struct snap *s, double seconds, char *err, size_t errlen)
{
    const unsigned what = PROBE_PROCS | PROBE_HOLDERS | PROBE_ACTIVITY;
    uint64_t start = clock_mono_ms(), span = (uint64_t)(seconds * 1000);
    bool tty = isatty(STDERR_FILENO);
    char total[32];
    units_fmt_duration(seconds, total, sizeof total);
    probe_sample(p, s, what | PROBE_SLOW, clock_wall_ms());
    bool any = false;
    for (size_t g = 0; g < s->ngpus; g++)
        any |= (s->gpus[g].have & SNAP_HAVE_ACTIVITY) != 0;
    if (!any) {
        snprintf(err, errlen,
                 "the driver keeps no per-process utilization for %s, so idle processes "
                 "cannot be told apart (needs a Maxwell or newer GPU, and not WDDM)",
                 s->ngpus == 1 ? "this GPU" : "these GPUs");
        return -1;
    }
    for (uint64_t now = clock_mono_ms(); now - start < span; now = clock_mono_ms()) {
        if (tty)
            fprintf(stderr, "\rwatching GPU activity: %llus of %s (Ctrl-C to stop) ",
                    (unsigned long long)((now - start) / 1000), total);
        uint64_t left = span - (now - start);
        uint64_t step = left < 1000 ? left : 1000;
        struct timespec ts = {(time_t)(step / 1000), (long)(step % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        probe_sample(p, s, what, clock_wall_ms());
    }
    if (tty)
        fprintf(stderr, "\r%60s\r", "");
    return 0;
}
