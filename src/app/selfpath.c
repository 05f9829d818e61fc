/* selfpath: files that ship next to the vram binary. */
#include "app/selfpath.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int selfpath_find(const char *const *rel, size_t n, char *out, size_t len)
{
    char exe[PATH_MAX], real[PATH_MAX];
    ssize_t got = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (got <= 0)
        return -1;
    exe[got] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    for (size_t i = 0; i < n; i++) {
        char cand[PATH_MAX + 64];
        snprintf(cand, sizeof cand, "%s/%s", exe, rel[i]);
        if (access(cand, R_OK) == 0 && realpath(cand, real)) {
            snprintf(out, len, "%s", real);
            return 0;
        }
    }
    return -1;
}
