/* pcie: a thread that reads every GPU's PCIe throughput when asked, and the
 * latest figures under a mutex. */
#include "probe/pcie.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/err.h"

struct reading {
    unsigned tx, rx;
    bool have, never; /* never: the driver has no counter here: not asked again */
};

struct pcie {
    const struct nvml *nvml;
    unsigned count;
    struct reading *r;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool started, asked, quit;
};

struct pcie *pcie_new(const struct nvml *n)
{
    struct pcie *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->nvml = n;
    p->count = nvml_count(n);
    if (!(p->r = calloc(p->count ? p->count : 1, sizeof *p->r))) {
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    return p;
}

static void *run(void *arg)
{
    struct pcie *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->asked && !p->quit)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->quit)
            break;
        p->asked = false;
        for (unsigned i = 0; i < p->count && !p->quit; i++) {
            if (p->r[i].never)
                continue;
            pthread_mutex_unlock(&p->mu); /* 40 ms in the driver: nobody waits on us */
            unsigned tx = 0, rx = 0;
            int rc = nvml_pcie_throughput(p->nvml, i, &tx, &rx);
            pthread_mutex_lock(&p->mu);
            if (rc == VRAM_OK)
                p->r[i] = (struct reading){tx, rx, true, false};
            else if (rc == VRAM_EINPUT)
                p->r[i] = (struct reading){.never = true};
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

void pcie_ask(struct pcie *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    if (!p->started)
        p->started = pthread_create(&p->th, NULL, run, p) == 0;
    p->asked = true;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void pcie_apply(struct pcie *p, struct snap *s)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    for (unsigned i = 0; i < p->count && i < s->ngpus; i++) {
        struct snap_gpu *g = &s->gpus[i];
        g->have &= ~(unsigned)SNAP_HAVE_PCIE_THROUGHPUT;
        if (!p->r[i].have)
            continue;
        g->pcie_tx_kbs = p->r[i].tx;
        g->pcie_rx_kbs = p->r[i].rx;
        g->have |= SNAP_HAVE_PCIE_THROUGHPUT;
    }
    pthread_mutex_unlock(&p->mu);
}

void pcie_free(struct pcie *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_signal(&p->cv);
    bool started = p->started;
    pthread_mutex_unlock(&p->mu);
    if (started)
        pthread_join(p->th, NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->r);
    free(p);
}
