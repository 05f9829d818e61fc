/* selfpath: files that ship with the vram binary: next to it in a build
 * tree, in its library and data folders once installed. */
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
#ifndef VRAM_PKGDATADIR
#define VRAM_PKGDATADIR "/usr/local/share/vram"
#endif
#ifndef VRAM_PKGDATADIR_REL
#define VRAM_PKGDATADIR_REL "../share/vram"
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

/* name next to the binary (a build tree), else in the installed tree:
 * rel, then alt (NULL: none) from the binary's folder, then abs. */
static int shipped(const char *name, const char *rel, const char *alt, const char *abs, char *out,
                   size_t len)
{
    char c[3][PATH_MAX];
    snprintf(c[0], sizeof c[0], "%s", name);
    snprintf(c[1], sizeof c[1], "%s/%s", rel, name);
    snprintf(c[2], sizeof c[2], "%s/%s", alt ? alt : rel, name);
    const char *const rels[] = {c[0], c[1], c[2]};
    if (selfpath_find(rels, 3, out, len) == 0)
        return 0;
    char a[PATH_MAX], real[PATH_MAX];
    snprintf(a, sizeof a, "%s/%s", abs, name);
    if (access(a, R_OK) == 0 && realpath(a, real)) {
        snprintf(out, len, "%s", real);
        return 0;
    }
    return -1;
}

int selfpath_lib(const char *name, char *out, size_t len)
{
    return shipped(name, VRAM_PKGLIBDIR_REL, "../lib/vram", VRAM_PKGLIBDIR, out, len);
}

int selfpath_data(const char *name, char *out, size_t len)
{
    return shipped(name, VRAM_PKGDATADIR_REL, NULL, VRAM_PKGDATADIR, out, len);
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
    if (selfpath_lib("libvramcap.so", out, len) == 0)
        return 0;
    char exe[PATH_MAX] = "?";
    exe_dir(exe, sizeof exe);
    snprintf(err, errlen,
             "libvramcap.so is not installed with this vram: looked in %s/, %s/%s/, "
             "%s/../lib/vram/ and %s/ (reinstall vram, or set VRAM_SHIM to the library)",
             exe, exe, VRAM_PKGLIBDIR_REL, exe, VRAM_PKGLIBDIR);
    return -1;
}
