/* simenv: `vram --sim FILE` and VRAM_SIM=FILE.
 *
 * glibc reads LD_LIBRARY_PATH once, at program start, so setting it for our
 * own dlopen means starting again: we exec ourselves once with the variable
 * set, which children then inherit. The machine file is checked by the
 * simulated driver itself (vram_sim_check, found by dlsym), so that this
 * binary never links or includes the simulator. */
#include "cli/simenv.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "app/selfpath.h"

static int find_libdir(char *out, size_t len)
{
    const char *forced = getenv("VRAM_SIM_LIBDIR");
    if (forced && *forced) {
        snprintf(out, len, "%s", forced);
        return 0;
    }
    /* the build tree (build/vram, build/sim/), then an installed tree */
    if (selfpath_lib("sim/libnvidia-ml.so.1", out, len) < 0)
        return -1;
    char *slash = strrchr(out, '/');
    if (slash)
        *slash = '\0';
    return 0;
}

static int check_machine(const char *libdir, const char *file, char *err, size_t errlen)
{
    char lib[PATH_MAX + 32];
    snprintf(lib, sizeof lib, "%s/libnvidia-ml.so.1", libdir);
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    int (*check)(const char *, char *, size_t) =
        h ? (int (*)(const char *, char *, size_t))dlsym(h, "vram_sim_check") : NULL;
    if (!check) {
        snprintf(err, errlen, "%s is not vram's simulated driver (%s)", lib,
                 h ? "no vram_sim_check" : dlerror());
        if (h)
            dlclose(h);
        return VRAM_EFAIL;
    }
    int rc = check(file, err, errlen);
    dlclose(h);
    if (rc < 0) {
        if (access(file, R_OK) != 0)
            snprintf(err, errlen, "%s: %s (the machine file for --sim, or the name of an "
                                  "example: workstation, server-8xh200)",
                     file, strerror(errno));
        return VRAM_EINPUT;
    }
    return VRAM_OK;
}

/* An example machine by its name ("workstation"): its file, shipped with
 * vram, into out. */
static int example(const char *name, char *out, size_t len)
{
    char rel[128];
    if (!*name || strchr(name, '/') || strlen(name) > 64)
        return -1;
    snprintf(rel, sizeof rel, "examples/%s%s", name,
             strlen(name) > 5 && !strcmp(name + strlen(name) - 5, ".json") ? "" : ".json");
    return selfpath_data(rel, out, len);
}

bool simenv_hint(const char *name)
{
    char lib[PATH_MAX], file[PATH_MAX];
    return find_libdir(lib, sizeof lib) == 0 && example(name, file, sizeof file) == 0;
}

int simenv_apply(const char *file, char **argv, char *err, size_t errlen)
{
    const char *env = getenv("VRAM_SIM");
    if (!file)
        file = env && *env ? env : NULL;
    if (!file)
        return VRAM_OK;

    char abs[PATH_MAX], libdir[PATH_MAX], shipped[PATH_MAX];
    if (access(file, F_OK) != 0 && example(file, shipped, sizeof shipped) == 0)
        file = shipped; /* a name, not a file here: the example machine */
    if (!realpath(file, abs)) {
        snprintf(err, errlen, "%s: %s (a machine file, or the name of an example: workstation, "
                              "server-8xh200)",
                 file, strerror(errno));
        return VRAM_EINPUT;
    }
    if (find_libdir(libdir, sizeof libdir) < 0) {
        snprintf(err, errlen,
                 "the simulated driver (sim/libnvidia-ml.so.1) is not next to this vram binary; "
                 "build it with meson, or set VRAM_SIM_LIBDIR to its folder");
        return VRAM_EFAIL;
    }
    const char *llp = getenv("LD_LIBRARY_PATH");
    size_t dl = strlen(libdir);
    bool in_place = env && strcmp(env, abs) == 0 && llp && strncmp(llp, libdir, dl) == 0 &&
                    (llp[dl] == '\0' || llp[dl] == ':');
    /* checked again after the restart: VRAM_SIM may have come with a
     * library path that already names the simulator */
    int rc = check_machine(libdir, file, err, errlen);
    if (rc < 0 || in_place)
        return rc;

    char *newpath = malloc(dl + (llp ? strlen(llp) : 0) + 2);
    if (!newpath)
        return VRAM_EFAIL;
    sprintf(newpath, llp && *llp ? "%s:%s" : "%s", libdir, llp ? llp : "");
    setenv("LD_LIBRARY_PATH", newpath, 1);
    setenv("VRAM_SIM", abs, 1);
    free(newpath);
    execv("/proc/self/exe", argv);
    snprintf(err, errlen, "cannot restart vram with the simulated driver: %s", strerror(errno));
    return VRAM_EFAIL;
}
