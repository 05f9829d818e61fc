/* selfpath: files that ship next to the vram binary. */
#include "app/selfpath.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* meson.build gives both; these are what a default `meson install` to
 * /usr/local on Debian makes */
#ifndef VRAM_PKGLIBDIR
#define VRAM_PKGLIBDIR "/usr/local/lib/x86_64-linux-gnu/vram"
#endif
#ifndef VRAM_PKGLIBDIR_REL
#define VRAM_PKGLIBDIR_REL "../lib/x86_64-linux-gnu/vram"
#endif

static int exe_dir(char *out, size_t len)
{
    ssize_t got = readlink("/proc/self/exe", out, len - 1);
    if (got <= 0)
        return -1;
    out[got] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return 0;
}

int selfpath_find(const char *const *rel, size_t n, char *out, size_t len)
{
    char exe[PATH_MAX], real[PATH_MAX];
    if (exe_dir(exe, sizeof exe) < 0)
        return -1;
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

int selfpath_libvramcap(char *out, size_t len, char *err, size_t errlen)
{
    const char *forced = getenv("VRAM_SHIM");
    if (forced && *forced) {
        char real[PATH_MAX];
        if (access(forced, R_OK) == 0 && realpath(forced, real)) {
            snprintf(out, len, "%s", real);
            return 0;
        }
        snprintf(err, errlen, "VRAM_SHIM=%s: %s (unset it, or name libvramcap.so)", forced,
                 strerror(errno));
        return -1;
    }
    static const char *const rel[] = {"libvramcap.so", VRAM_PKGLIBDIR_REL "/libvramcap.so",
                                      "../lib/vram/libvramcap.so"};
    if (selfpath_find(rel, sizeof rel / sizeof rel[0], out, len) == 0)
        return 0;
    const char *abs = VRAM_PKGLIBDIR "/libvramcap.so";
    if (access(abs, R_OK) == 0) {
        snprintf(out, len, "%s", abs);
        return 0;
    }
    char exe[PATH_MAX] = "?";
    exe_dir(exe, sizeof exe);
    snprintf(err, errlen,
             "libvramcap.so is not installed with this vram: looked in %s/, %s/%s/, "
             "%s/../lib/vram/ and %s/ (reinstall vram, or set VRAM_SHIM to the library)",
             exe, exe, VRAM_PKGLIBDIR_REL, exe, VRAM_PKGLIBDIR);
    return -1;
}
