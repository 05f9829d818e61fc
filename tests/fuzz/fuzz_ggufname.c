/* Fuzz target: a GGUF file's name as a store holds it (a Hugging Face
 * repository's files, llama.cpp's cache, LM Studio's folder: named by
 * whoever published or fetched them) and a model name with its :TAG as a
 * client sends it. The quantization read from a name is a run of it, in
 * bounds, upper case; a name answers to its own quantization; a tag split
 * off a name joins back into it. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ggufname.h"
#include "model/ggufset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    struct ggufname g;
    if (ggufname_parse(s, &g)) {
        size_t q = strnlen(g.quant, sizeof g.quant);
        if (q == sizeof g.quant || g.part < 1 || g.part > g.parts)
            abort();
        for (size_t i = 0; i < q; i++)
            if (islower((unsigned char)g.quant[i]))
                abort();
        if (q && (!ggufname_matches(s, g.quant) || !strcasestr(s, g.quant)))
            abort();
        if (ggufname_is_model(s) != (strncasecmp(s, "mmproj", 6) && g.part == 1))
            abort();
    }
    /* the tag: the rest of the input after its first line */
    char *nl = strchr(s, '\n');
    if (nl) {
        *nl = '\0';
        ggufname_matches(s, nl + 1);
    }
    char base[300], tag[64], again[400];
    if (ggufset_split_tag(s, base, sizeof base, tag, sizeof tag)) {
        if (!tag[0] || strchr(tag, '/') || strchr(tag, ':') == tag)
            abort();
        snprintf(again, sizeof again, "%s:%s", base, tag);
        if (strcmp(again, s))
            abort();
    }
    free(s);
    return 0;
}
