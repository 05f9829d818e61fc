/* Fuzz target: an Ollama manifest. An error or a blob name of the form
 * sha256-<64 hex digits> (nothing else may reach a path), never a crash.
 * Inputs of odd length are read with a size limit of half their size. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/ollama.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct reader r;
    char err[512], blob[80];
    uint64_t max = size & 1 ? size / 2 : OLLAMA_MAX_MANIFEST;
    reader_open_mem(&r, data, size);
    if (ollama_manifest(&r, "fuzz", max, blob, sizeof blob, err, sizeof err) == 0 &&
        (strlen(blob) != 71 || strncmp(blob, "sha256-", 7) ||
         strspn(blob + 7, "0123456789abcdef") != 64 || size > max))
        abort();
    return 0;
}
