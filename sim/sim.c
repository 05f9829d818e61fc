/* sim: loading the simulated machine once per process. */
#include "sim/sim.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static struct sim *the_sim;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    const char *path = getenv("VRAM_SIM");
    if (!path || !*path)
        return;
    struct sim *s = calloc(1, sizeof *s);
    if (!s)
        return;
    char err[512];
    if (sim_machine_load(path, &s->machine, err, sizeof err) < 0) {
        fprintf(stderr, "simulated driver: %s\n", err);
        free(s);
        return;
    }
    if (sim_state_open(&s->state, path) < 0) {
        fprintf(stderr, "simulated driver: cannot open the shared ledger for %s\n", path);
        free(s);
        return;
    }
    the_sim = s;
}

/* The library can be dlclose'd (vram does, when it is done with NVML). */
__attribute__((destructor)) static void unload(void)
{
    if (!the_sim)
        return;
    sim_state_close(&the_sim->state);
    free(the_sim);
    the_sim = NULL;
}

struct sim *sim_get(void)
{
    pthread_once(&once, load);
    return the_sim;
}

static uint64_t used_with(struct sim *s, unsigned gpu, uint64_t ledger)
{
    const struct sim_gpu_def *g = &s->machine.gpus[gpu];
    uint64_t used = g->hidden + ledger;
    for (unsigned i = 0; i < g->nprocs; i++)
        used += g->procs[i].used;
    return used;
}

uint64_t sim_used_locked(struct sim *s, unsigned gpu)
{
    return used_with(s, gpu, sim_state_used(&s->state, gpu));
}

int sim_fits_locked(struct sim *s, unsigned gpu, uint64_t bytes)
{
    const struct sim_gpu_def *g = &s->machine.gpus[gpu];
    /* the dead count in the bound: only near the top is /proc asked */
    if (g->reserved + used_with(s, gpu, sim_state_used_bound(&s->state, gpu)) + bytes <= g->memory)
        return 1;
    return g->reserved + sim_used_locked(s, gpu) + bytes <= g->memory;
}

/* For `vram --sim FILE`: a broken machine file is reported with its line
 * and column before vram restarts itself onto this library. vram finds
 * this by dlsym, so that it never links or includes the simulator. */
__attribute__((visibility("default"))) int vram_sim_check(const char *path, char *err, size_t len)
{
    struct sim_machine *m = malloc(sizeof *m);
    if (!m) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    int rc = sim_machine_load(path, m, err, len);
    free(m);
    return rc;
}
