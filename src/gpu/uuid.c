/* uuid: "GPU-" (or "MIG-") then 32 hex digits, dashes anywhere between. */
#include "gpu/uuid.h"

#include <ctype.h>
#include <string.h>

static int hexval(char c)
{
    return isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10;
}

int gpu_uuid_parse(const char *s, unsigned char out[16])
{
    if (strncmp(s, "GPU-", 4) && strncmp(s, "MIG-", 4))
        return -1;
    int n = 0;
    for (const char *p = s + 4; *p; p++) {
        if (*p == '-')
            continue;
        if (!isxdigit((unsigned char)*p) || n == 32)
            return -1;
        int v = hexval(*p);
        out[n / 2] = (unsigned char)(n % 2 ? (out[n / 2] << 4) | v : v);
        n++;
    }
    return n == 32 ? 0 : -1;
}
