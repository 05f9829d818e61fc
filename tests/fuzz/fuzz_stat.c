/* Fuzz target: /proc/PID/stat text, whose process name may hold anything. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host/proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char comm[16], state;
    uint32_t ppid;
    uint64_t ticks;
    if (hostproc_parse_stat((const char *)data, size, comm, sizeof comm, &state, &ppid, &ticks) ==
            0 &&
        strnlen(comm, sizeof comm) == sizeof comm)
        abort();
    struct hostproc_stat st;
    if (hostproc_parse_stat_all((const char *)data, size, comm, sizeof comm, &st) == 0 &&
        strnlen(comm, sizeof comm) == sizeof comm)
        abort();
    return 0;
}
