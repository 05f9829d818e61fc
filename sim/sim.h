/* sim: what the simulated NVML and CUDA libraries share: the machine they
 * were told to be (VRAM_SIM names its file) and the ledger of its memory. */
#ifndef VRAM_SIM_SIM_H
#define VRAM_SIM_SIM_H

#include "sim/machine.h"
#include "sim/state.h"

struct sim {
    struct sim_machine machine;
    struct sim_state state;
};

/* The process's simulated machine, loaded once; NULL (with a message on
 * stderr) when VRAM_SIM is unset or its file is broken. */
struct sim *sim_get(void);

/* Memory in use on a GPU, the driver's reserve not included. Under the lock. */
uint64_t sim_used_locked(struct sim *s, unsigned gpu);

/* Under the lock: whether bytes more fit on gpu (what sim_used_locked
 * decides, asking /proc only when the GPU is nearly full). */
int sim_fits_locked(struct sim *s, unsigned gpu, uint64_t bytes);

#endif
