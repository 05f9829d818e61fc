/* Fuzz target: a Slurm job's GRES request as the SPANK plugin reads it
 * from slurmctld (the user wrote most of it). What parses holds together:
 * a type that fits its buffer and is NUL-terminated, a found count. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/gresreq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    struct gresreq g;
    if (gresreq_parse(s, "vram", &g) == 0) {
        if (strnlen(g.type, sizeof g.type) == sizeof g.type)
            abort();
        if (!g.found && (g.count || g.type[0]))
            abort();
        if (g.type[0] && gresreq_gpu_of(g.type) < -1)
            abort();
    }
    uint64_t v;
    gresreq_count(s, size < 64 ? size : 64, &v);
    free(s);
    return 0;
}
