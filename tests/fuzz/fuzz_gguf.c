/* Fuzz target: a GGUF header. An error or a model, never a crash. Inputs of
 * odd length are read with a header limit of half their size, so the bound
 * on the header (128 MiB in the product) is reached and refused too. */
#include <stdint.h>
#include <stdlib.h>

#include "model/gguf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct reader r;
    struct model_info m;
    char err[512];
    uint64_t max = size & 1 ? size / 2 : GGUF_MAX_HEADER;
    reader_open_mem(&r, data, size);
    if (gguf_parse_max(&r, "fuzz.gguf", max, &m, err, sizeof err) == 0 && m.weight_bytes > size)
        abort(); /* every tensor was checked to lie inside the file */
    return 0;
}
