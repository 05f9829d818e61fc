/* cuda_ipc: memory shared between processes in the simulated
 * libcuda.so.1, the legacy way (cuIpcGetMemHandle, cuIpcOpenMemHandle,
 * cuIpcCloseMemHandle).
 *
 * As on the driver: only the base of a cuMemAlloc allocation can be
 * exported (not VMM memory, not a pool's, not managed memory), the handle
 * is 64 opaque bytes any process of the same user can open, and what it
 * opens is the same memory, at an address of the importer's. The
 * simulation's device memory is host memory: exporting moves the
 * allocation into a memfd (cuda_mem.c), the handle names it
 * (/proc/PID/fd/N), and opening maps it. The importer's mapping is charged
 * nothing: the memory is the exporter's. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/cuda_internal.h"

#define EXPORT SIM_EXPORT

static const char magic[8] = "simipc1";

struct wire {
    char magic[8];
    int32_t pid, fd, dev, pad;
    uint64_t size, ptr;
};
_Static_assert(sizeof(struct wire) <= sizeof(CUipcMemHandle), "fits a handle");

EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr p)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!h)
        return CUDA_ERROR_INVALID_VALUE;
    int fd;
    size_t size;
    CUdevice dev;
    if (simcu_share(p, &fd, &size, &dev) < 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct wire w = {.pid = (int32_t)getpid(), .fd = fd, .dev = dev, .size = size, .ptr = p};
    memcpy(w.magic, magic, sizeof magic);
    memset(h, 0, sizeof *h);
    memcpy(h->reserved, &w, sizeof w);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *dptr, CUipcMemHandle h, unsigned flags)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUdevice me = simcu_device();
    if (me < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct wire w;
    memcpy(&w, h.reserved, sizeof w);
    if (!dptr || flags > CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS || memcmp(w.magic, magic, 8) ||
        w.size == 0 || w.fd < 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (w.pid == (int32_t)getpid()) /* the exporter itself cannot open it */
        return CUDA_ERROR_INVALID_CONTEXT;
    if (w.dev != me && !(flags & CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))
        return CUDA_ERROR_INVALID_DEVICE;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)w.pid, (int)w.fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || (uint64_t)st.st_size < w.size) {
        if (fd >= 0)
            close(fd);
        return CUDA_ERROR_INVALID_HANDLE; /* gone with its process, or freed */
    }
    void *at = mmap(NULL, w.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (at == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    /* reachable from the importer's device, whichever device it is on */
    if (simcu_track((CUdeviceptr)(uintptr_t)at, w.size, 0, me, SIMCU_IPC) < 0) {
        munmap(at, w.size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *dptr = (CUdeviceptr)(uintptr_t)at;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr p)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    return simcu_linear_release(p, SIMCU_IPC) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
