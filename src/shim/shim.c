/* shim: what the parts of libvramcap share (see shim.h). */
#include "shim/shim.h"

#include "shim/driver.h"

struct shim shim;

int shim_device_now(void)
{
    CUdevice d = -1;
    if (real_cuCtxGetDevice && real_cuCtxGetDevice(&d) != CUDA_SUCCESS)
        d = -1;
    return d;
}

/* Back to the device the allocation was charged to, whatever is current. */
void shim_give_back(uint64_t key, const enum allocs_kind *kinds, size_t nkinds)
{
    struct allocs_entry e;
    for (size_t i = 0; i < nkinds; i++)
        if (allocs_take(&shim.allocs, key, kinds[i], &e) == 0) {
            shim_budget_give(e.dev, e.bytes);
            return;
        }
}
