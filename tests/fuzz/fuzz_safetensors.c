/* Fuzz target: a safetensors header. An error or a summary, never a crash
 * and never an allocation larger than the input. */
#include <stdint.h>
#include <stdlib.h>

#include "model/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct reader r;
    struct safetensors_summary s = {0};
    char err[512];
    reader_open_mem(&r, data, size);
    if (safetensors_parse(&r, "fuzz.safetensors", &s, err, sizeof err) == 0 && s.bytes > size)
        abort(); /* data ranges were checked against the file */
    return 0;
}
