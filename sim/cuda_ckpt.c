/* cuda_ckpt: the simulated driver's process checkpoints (what
 * cuCheckpointProcess* do on driver 570+): a caller locks another process,
 * moves its device memory to host, restores it (on the same GPU or, with
 * UUID pairs, another of the same kind) and unlocks it.
 *
 * The state lives in the shared ledger, per slot: the locked process's own
 * CUDA calls wait at simcu_gate(); checkpointing moves the slot's bytes to
 * its host count, so NVML shows the GPU memory freed; restoring checks that
 * the target GPU has room, as the real driver does, before changing
 * anything. The bytes themselves stay in the process: simulated device
 * memory is host memory already. */
#include <string.h>

#include "sim/cuda_internal.h"
#include "gpu/uuid.h"
#include "sim/state.h"

#define EXPORT SIM_EXPORT

/* The live slots of pid, all in state want, or an error. */
static CUresult slots_of(struct sim *s, int pid, uint32_t want, struct sim_slot **out, unsigned *n)
{
    *n = 0;
    sim_state_used(&s->state, 0); /* drops the dead */
    for (unsigned i = 0; i < SIM_SLOTS; i++) {
        struct sim_slot *sl = &s->state.ledger->slots[i];
        if (sl->pid != pid || sl->pid <= 0)
            continue;
        if (sl->ckpt != want)
            return CUDA_ERROR_ILLEGAL_STATE;
        out[(*n)++] = sl;
    }
    return *n ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/* Moves every slot of pid from state from to state to, with a step. */
static CUresult transition(int pid, uint32_t from, uint32_t to, void (*step)(struct sim_slot *))
{
    struct sim *s = simcu_ready();
    if (!s)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (pid <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_slot *v[SIM_SLOTS];
    unsigned n;
    sim_state_lock(&s->state);
    CUresult rc = slots_of(s, pid, from, v, &n);
    for (unsigned i = 0; rc == CUDA_SUCCESS && i < n; i++) {
        if (step)
            step(v[i]);
        v[i]->ckpt = to;
    }
    sim_state_unlock(&s->state);
    return rc;
}

static void to_host(struct sim_slot *sl)
{
    sl->host = sl->used;
    sl->used = 0;
}

EXPORT CUresult cuCheckpointProcessGetState(int pid, CUprocessState *state)
{
    struct sim *s = simcu_ready();
    if (!s)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!state)
        return CUDA_ERROR_INVALID_VALUE;
    sim_state_lock(&s->state);
    sim_state_used(&s->state, 0);
    CUresult rc = CUDA_ERROR_NOT_FOUND;
    for (unsigned i = 0; i < SIM_SLOTS; i++) {
        const struct sim_slot *sl = &s->state.ledger->slots[i];
        if (sl->pid == pid && pid > 0) {
            *state = (CUprocessState)sl->ckpt;
            rc = CUDA_SUCCESS;
        }
    }
    sim_state_unlock(&s->state);
    return rc;
}

EXPORT CUresult cuCheckpointProcessLock(int pid, CUcheckpointLockArgs *args)
{
    (void)args;
    return transition(pid, CU_PROCESS_STATE_RUNNING, CU_PROCESS_STATE_LOCKED, NULL);
}

EXPORT CUresult cuCheckpointProcessCheckpoint(int pid, CUcheckpointCheckpointArgs *args)
{
    (void)args;
    return transition(pid, CU_PROCESS_STATE_LOCKED, CU_PROCESS_STATE_CHECKPOINTED, to_host);
}

EXPORT CUresult cuCheckpointProcessUnlock(int pid, CUcheckpointUnlockArgs *args)
{
    (void)args;
    return transition(pid, CU_PROCESS_STATE_LOCKED, CU_PROCESS_STATE_RUNNING, NULL);
}

static int gpu_of_uuid(const struct sim *s, const CUuuid *u)
{
    for (unsigned i = 0; i < s->machine.ngpus; i++) {
        unsigned char mine[16];
        if (gpu_uuid_parse(s->machine.gpus[i].uuid, mine) == 0 &&
            !memcmp(mine, u->bytes, sizeof mine))
            return (int)i;
    }
    return -1;
}

EXPORT CUresult cuCheckpointProcessRestore(int pid, CUcheckpointRestoreArgs *args)
{
    struct sim *s = simcu_ready();
    if (!s)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (pid <= 0 || (args && args->gpuPairsCount && !args->gpuPairs))
        return CUDA_ERROR_INVALID_VALUE;
    unsigned npairs = args ? args->gpuPairsCount : 0;
    int from[SIM_MAX_GPUS], to[SIM_MAX_GPUS];
    for (unsigned k = 0; k < npairs; k++) {
        if (k >= SIM_MAX_GPUS)
            return CUDA_ERROR_INVALID_VALUE;
        from[k] = gpu_of_uuid(s, &args->gpuPairs[k].oldUuid);
        to[k] = gpu_of_uuid(s, &args->gpuPairs[k].newUuid);
        if (from[k] < 0 || to[k] < 0)
            return CUDA_ERROR_INVALID_DEVICE;
    }
    struct sim_slot *v[SIM_SLOTS];
    unsigned n;
    sim_state_lock(&s->state);
    CUresult rc = slots_of(s, pid, CU_PROCESS_STATE_CHECKPOINTED, v, &n);
    unsigned dest[SIM_SLOTS];
    uint64_t need[SIM_MAX_GPUS] = {0};
    for (unsigned i = 0; rc == CUDA_SUCCESS && i < n; i++) {
        dest[i] = v[i]->gpu;
        bool listed = npairs == 0;
        for (unsigned k = 0; k < npairs; k++)
            if ((unsigned)from[k] == v[i]->gpu) {
                dest[i] = (unsigned)to[k];
                listed = true;
            }
        if (!listed) /* the pairs must name every checkpointed GPU */
            rc = CUDA_ERROR_INVALID_VALUE;
        else
            need[dest[i]] += v[i]->host;
    }
    for (unsigned g = 0; rc == CUDA_SUCCESS && g < s->machine.ngpus; g++) {
        const struct sim_gpu_def *d = &s->machine.gpus[g];
        if (need[g] && d->reserved + sim_used_locked(s, g) + need[g] > d->memory)
            rc = CUDA_ERROR_OUT_OF_MEMORY; /* nothing moved: it stays checkpointed */
    }
    for (unsigned i = 0; rc == CUDA_SUCCESS && i < n; i++) {
        v[i]->gpu = dest[i];
        v[i]->used = v[i]->host;
        v[i]->host = 0;
        v[i]->ckpt = CU_PROCESS_STATE_LOCKED;
    }
    sim_state_unlock(&s->state);
    return rc;
}
