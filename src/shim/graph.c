/* graph: graph memory at a suspend (see graph.h). */
#include "shim/graph.h"

#include <stdio.h>

#include "core/units.h"
#include "shim/driver.h"

static uint64_t attr(int dev, int which)
{
    uint64_t v = 0;
    if (!real_cuDeviceGetGraphMemAttribute ||
        real_cuDeviceGetGraphMemAttribute(dev, which, &v) != CUDA_SUCCESS)
        v = 0; /* a driver without graph memory has none */
    return v;
}

const char *graph_blocker(int dev, char *why, size_t len)
{
    uint64_t used = attr(dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT);
    if (!used)
        return NULL;
    char sz[32];
    snprintf(why, len,
             "it holds %s on GPU %d that a CUDA graph allocated and has not freed (graph "
             "memory nodes)",
             units_fmt_size(used, sz, sizeof sz), dev);
    return why;
}

int graph_trim(int dev, char *why, size_t len)
{
    if (!real_cuDeviceGraphMemTrim || real_cuDeviceGraphMemTrim(dev) != CUDA_SUCCESS)
        return 0; /* no graph memory on this driver */
    uint64_t left = attr(dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT);
    if (!left)
        return 0;
    char sz[32];
    snprintf(why, len, "%s of graph memory stays on GPU %d after trimming it",
             units_fmt_size(left, sz, sizeof sz), dev);
    return -1;
}
