/* Fuzz target: /proc/PID/cgroup text. Results always fit their buffers. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host/cgroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], id[24];
    cgroup_parse((const char *)data, size, path, sizeof path, id, sizeof id);
    if (strnlen(path, sizeof path) == sizeof path || strnlen(id, sizeof id) == sizeof id)
        abort();
    return 0;
}
