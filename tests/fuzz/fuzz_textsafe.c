/* Fuzz target: the terminal sanitiser (core/textsafe.c), which sees any
 * byte another party wrote. What comes out holds no C0 or C1 control and
 * no DEL, is never longer than what went in, and is its own result again;
 * the copy agrees with the in-place form. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/textsafe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1), *again = malloc(size + 1), *copy = malloc(size + 1);
    if (!s || !again || !copy)
        goto out;
    memcpy(s, data, size);
    s[size] = '\0';
    size_t before = strlen(s);
    textsafe_copy((const char *)data, size, copy, size + 1);
    textsafe(s);
    size_t n = strlen(s);
    if (n > before || strcmp(s, copy))
        abort();
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f || (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
                                      (unsigned char)s[i + 1] <= 0x9f))
            abort();
    }
    memcpy(again, s, n + 1);
    if (strcmp(textsafe(again), s))
        abort();
out:
    free(s);
    free(again);
    free(copy);
    return 0;
}
