/* ckpt: the driver's process checkpoints, by dlopen. */
#include "move/ckpt.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "gpu/cuda_api.h"
#include "gpu/uuid.h"

struct ckpt {
    void *lib;
    CUresult (*init)(unsigned);
    CUresult (*err_name)(CUresult, const char **);
    CUresult (*get_state)(int, CUprocessState *);
    CUresult (*lock)(int, CUcheckpointLockArgs *);
    CUresult (*checkpoint)(int, CUcheckpointCheckpointArgs *);
    CUresult (*restore)(int, CUcheckpointRestoreArgs *);
    CUresult (*unlock)(int, CUcheckpointUnlockArgs *);
};

int ckpt_open(struct ckpt **out, char *err, size_t len)
{
    *out = NULL;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(err, len, "cannot load libcuda.so.1 (%s): no NVIDIA driver here", dlerror());
        return VRAM_ENODRIVER;
    }
    struct ckpt *c = calloc(1, sizeof *c);
    if (!c) {
        dlclose(lib);
        snprintf(err, len, "out of memory");
        return VRAM_EFAIL;
    }
    c->lib = lib;
    *(void **)&c->init = dlsym(lib, "cuInit");
    *(void **)&c->err_name = dlsym(lib, "cuGetErrorName");
    *(void **)&c->get_state = dlsym(lib, "cuCheckpointProcessGetState");
    *(void **)&c->lock = dlsym(lib, "cuCheckpointProcessLock");
    *(void **)&c->checkpoint = dlsym(lib, "cuCheckpointProcessCheckpoint");
    *(void **)&c->restore = dlsym(lib, "cuCheckpointProcessRestore");
    *(void **)&c->unlock = dlsym(lib, "cuCheckpointProcessUnlock");
    if (!c->init || !c->get_state || !c->lock || !c->checkpoint || !c->restore || !c->unlock) {
        snprintf(err, len,
                 "this NVIDIA driver has no process checkpoints (cuCheckpointProcessLock): "
                 "suspend needs driver 570 or newer");
        ckpt_close(c);
        return VRAM_EFAIL;
    }
    CUresult rc = c->init(0);
    if (rc != CUDA_SUCCESS) {
        snprintf(err, len, "cuInit failed (%d): is the NVIDIA kernel module loaded?", rc);
        ckpt_close(c);
        return VRAM_ENODRIVER;
    }
    *out = c;
    return VRAM_OK;
}

void ckpt_close(struct ckpt *c)
{
    if (!c)
        return;
    dlclose(c->lib);
    free(c);
}

const char *ckpt_state_name(int state)
{
    static const char *const names[] = {"running", "locked", "checkpointed", "failed"};
    return state >= 0 && state < 4 ? names[state] : "unknown";
}

static int fail(struct ckpt *c, CUresult rc, const char *what, int pid, char *err, size_t len)
{
    const char *name = NULL;
    if (!c->err_name || c->err_name(rc, &name) != CUDA_SUCCESS || !name)
        name = "unknown error";
    const char *hint = rc == CUDA_ERROR_OUT_OF_MEMORY ? ": not enough free GPU memory"
                       : rc == CUDA_ERROR_NOT_FOUND   ? ": no CUDA process with that pid"
                       : rc == CUDA_ERROR_ILLEGAL_STATE
                           ? ": it is not in the state this step needs (see vram status)"
                       : rc == CUDA_ERROR_TIMEOUT ? ": its GPU work did not finish in time"
                                                  : "";
    snprintf(err, len, "%s of pid %d failed (%s)%s", what, pid, name, hint);
    return -1;
}

int ckpt_state(struct ckpt *c, int pid, char *err, size_t len)
{
    CUprocessState st;
    CUresult rc = c->get_state(pid, &st);
    if (rc != CUDA_SUCCESS)
        return fail(c, rc, "reading the checkpoint state", pid, err, len);
    return (int)st;
}

int ckpt_suspend(struct ckpt *c, int pid, unsigned timeout_ms, char *err, size_t len)
{
    CUcheckpointLockArgs la;
    memset(&la, 0, sizeof la);
    la.timeoutMs = timeout_ms;
    CUresult rc = c->lock(pid, &la);
    if (rc != CUDA_SUCCESS)
        return fail(c, rc, "locking", pid, err, len);
    CUcheckpointCheckpointArgs ca;
    memset(&ca, 0, sizeof ca);
    rc = c->checkpoint(pid, &ca);
    if (rc != CUDA_SUCCESS) {
        CUcheckpointUnlockArgs ua;
        memset(&ua, 0, sizeof ua);
        c->unlock(pid, &ua); /* let it run on rather than leave it frozen */
        return fail(c, rc, "checkpointing", pid, err, len);
    }
    return 0;
}

int ckpt_resume(struct ckpt *c, int pid, const char *from_uuid, const char *to_uuid, char *err,
                size_t len)
{
    CUcheckpointRestoreArgs ra;
    CUcheckpointGpuPair pair;
    memset(&ra, 0, sizeof ra);
    if (from_uuid && to_uuid && strcmp(from_uuid, to_uuid)) {
        if (gpu_uuid_parse(from_uuid, (unsigned char *)pair.oldUuid.bytes) < 0 ||
            gpu_uuid_parse(to_uuid, (unsigned char *)pair.newUuid.bytes) < 0) {
            snprintf(err, len, "'%s' or '%s' is not a GPU UUID", from_uuid, to_uuid);
            return -1;
        }
        ra.gpuPairs = &pair;
        ra.gpuPairsCount = 1;
    }
    CUresult rc = c->restore(pid, &ra);
    if (rc != CUDA_SUCCESS)
        return fail(c, rc, "restoring", pid, err, len);
    CUcheckpointUnlockArgs ua;
    memset(&ua, 0, sizeof ua);
    rc = c->unlock(pid, &ua);
    if (rc != CUDA_SUCCESS)
        return fail(c, rc, "unlocking", pid, err, len);
    return 0;
}
