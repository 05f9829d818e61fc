/* Fuzz target: the GPU lists and sizes per GPU of vram run's --gpus and
 * --vram and libvramcap's VRAM_CAP. What parses holds together: names fit
 * their buffers, keys are in range and each once, no size is 0. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpuspec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    struct gpuspec_gpus g;
    if (gpuspec_parse_gpus(s, &g) == 0) {
        if (g.count == 0 || g.count > GPUSPEC_MAX)
            abort();
        for (unsigned i = 0; g.named && i < g.count; i++)
            if (!g.name[i][0] || strnlen(g.name[i], GPUSPEC_NAME) == GPUSPEC_NAME)
                abort();
    }
    struct gpuspec_sizes z;
    if (gpuspec_parse_sizes(s, &z) == 0) {
        bool seen[GPUSPEC_MAX] = {false};
        if (z.n == 0 || z.n > GPUSPEC_MAX)
            abort();
        for (unsigned i = 0; i < z.n; i++) {
            if (z.size[i] == 0 || (z.keyed && (z.key[i] >= GPUSPEC_MAX || seen[z.key[i]])))
                abort();
            if (z.keyed)
                seen[z.key[i]] = true;
            if (gpuspec_size_for(&z, i, z.keyed ? z.key[i] : i) != z.size[i] &&
                !gpuspec_uniform(&z))
                abort();
        }
        char keys[8];
        gpuspec_fmt_keys(&z, keys, sizeof keys);
        if (strnlen(keys, sizeof keys) == sizeof keys)
            abort();
    }
    free(s);
    return 0;
}
