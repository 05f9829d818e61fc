/* Fuzz target: a config.json, read as a stream. An error or a model, never
 * a crash. Inputs of odd length are read with a size limit of half their
 * size, so the bound (4 MiB in the product) is reached and refused too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/hfconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct reader r;
    static struct model_info m;
    char err[512];
    uint64_t max = size & 1 ? size / 2 : HFCONFIG_MAX;
    memset(&m, 0, sizeof m);
    reader_open_mem(&r, data, size);
    if (hfconfig_parse(&r, "fuzz.json", max, &m, err, sizeof err) == 0 && size > max)
        abort(); /* more than the limit was accepted */
    return 0;
}
