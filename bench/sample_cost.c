/* sample_cost: the CPU cost of one `vram top` sample, by kind of sample.
 * Runs the real probe N times and divides the process's CPU time (user +
 * system) by N and by the number of GPUs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/snapshot.h"
#include "probe/probe.h"

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    if (n < 1)
        n = 1;
    char err[512];
    struct probe *p;
    double w0 = wall_s();
    if (probe_open(&p, "/proc", err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 3;
    }
    printf("probe_open (dlopen + nvmlInit): %.2f ms wall\n", (wall_s() - w0) * 1e3);
    struct snap s;
    memset(&s, 0, sizeof s);
    w0 = wall_s();
    probe_sample(p, &s, PROBE_ALL, 0); /* static fields, first lists */
    printf("first full sample (what vram status does): %.2f ms wall\n", (wall_s() - w0) * 1e3);
    size_t ng = s.ngpus ? s.ngpus : 1;
    const struct {
        const char *what;
        unsigned flags;
    } kinds[] = {
        {"tick: memory, power, util (every 1 s)", PROBE_MEMORY},
        {"+ process lists joined with /proc (3 s)", PROBE_PROCS},
        {"+ modes, limits, links (every 10 s)", PROBE_PROCS | PROBE_SLOW},
        {"+ /proc/*/fd scan (every 10 s, +5 s)", PROBE_PROCS | PROBE_HOLDERS},
        {"energy counter alone (status --energy)", PROBE_ENERGY},
    };
    double cost[5];
    printf("%d samples each, %zu GPU(s)\n", n, s.ngpus);
    printf("%-42s %14s %14s\n", "sample kind", "CPU us/sample", "CPU us/GPU");
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        int reps = kinds[k].flags & (PROBE_HOLDERS | PROBE_ENERGY) ? (n / 10 ? n / 10 : 1) : n;
        double c0 = cpu_s();
        for (int i = 0; i < reps; i++)
            probe_sample(p, &s, kinds[k].flags, 0);
        cost[k] = (cpu_s() - c0) / reps * 1e6;
        printf("%-42s %14.1f %14.1f\n", kinds[k].what, cost[k], cost[k] / (double)ng);
    }
    /* `vram top` at its default 1 s: in every 30 s, 30 ticks of which 10
     * with process lists, 3 of those also with the slow calls, 3 with the scan */
    double per_s = (20 * cost[0] + 4 * cost[1] + 3 * cost[2] + 3 * cost[3]) / 30;
    printf("%-42s %14.1f %14.1f\n", "vram top at 1 s, average per second", per_s,
           per_s / (double)ng);
    /* what one top session costs on average: a tick every second, process
     * lists every 3 s, the slow calls and the /proc scan every 10 s */
    snap_free(&s);
    probe_close(p);
    return 0;
}
