/* Fuzz target: a safetensors header. An error or a summary, never a crash
 * and never an allocation larger than the input. Inputs of odd length are
 * read with a header limit of half their size, so the bound on the header
 * (100 MiB in the product) is reached and refused too. */
#include <stdint.h>
#include <stdlib.h>

#include "model/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct reader r;
    struct safetensors_summary s = {0};
    char err[512];
    uint64_t max = size & 1 ? size / 2 : SAFETENSORS_MAX_HEADER;
    reader_open_mem(&r, data, size);
    int rc = safetensors_parse_max(&r, "fuzz.safetensors", max, &s, err, sizeof err);
    if (rc == 0 && (s.bytes > size || s.header_bytes > max))
        abort(); /* data ranges were checked against the file, the header against its bound */
    return 0;
}
