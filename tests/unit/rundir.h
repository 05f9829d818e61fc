/* rundir: a fresh VRAM_RUN_DIR for a unit test's group files (rundir, the
 * folder's path), made by the group setup and removed by its teardown. */
#ifndef VRAM_TESTS_RUNDIR_H
#define VRAM_TESTS_RUNDIR_H

#include <stdio.h>
#include <stdlib.h>

static char rundir[64];

static int rundir_make(const char *tag)
{
    snprintf(rundir, sizeof rundir, "/tmp/vram-test-%s-XXXXXX", tag);
    if (!mkdtemp(rundir))
        return -1;
    setenv("VRAM_RUN_DIR", rundir, 1);
    return 0;
}

static int rundir_remove(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", rundir);
    return system(cmd);
}

#endif
