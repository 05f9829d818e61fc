/* Fuzz target: the answer line of a process's fast-swap socket. The peer
 * is checked to be the pid asked for, but that process runs anything. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/swapctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = malloc(size + 1);
    if (!line)
        return 0;
    memcpy(line, data, size);
    line[size] = '\0';
    struct swapctl_info in;
    swapctl_parse(line, &in);
    if (strnlen(in.state, sizeof in.state) == sizeof in.state ||
        strnlen(in.why, sizeof in.why) == sizeof in.why)
        abort();
    free(line);
    return 0;
}
