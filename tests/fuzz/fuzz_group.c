/* Fuzz target: a group file as any user may write it into the shared
 * folder, read as every other user reads it (ipc/group.c, ipc/slices.c).
 * The input overlays a well-formed file (magic and version kept, so the
 * reader goes past them). What comes out must be bounded whatever came in. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/slices.h"

static int dirfd_ = -1;
static char dir[] = "/tmp/vram-fuzz-group-XXXXXX";

static void cleanup(void)
{
    unlinkat(dirfd_, "vram-group-fuzz", 0);
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (dirfd_ < 0) {
        if (!mkdtemp(dir) || (dirfd_ = open(dir, O_RDONLY | O_DIRECTORY)) < 0)
            abort();
        atexit(cleanup);
    }
    struct group_shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        abort();
    memcpy(sh, data, size < sizeof *sh ? size : sizeof *sh);
    sh->magic = 0x7672616d63617032ULL;
    sh->version = 2;
    int fd = openat(dirfd_, "vram-group-fuzz", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || pwrite(fd, sh, sizeof *sh, 0) != (ssize_t)sizeof *sh)
        abort();
    close(fd);
    free(sh);
    struct slice s;
    if (group_read_at(dirfd_, "vram-group-fuzz", &s.v) < 0)
        abort(); /* well-formed on disk: it must be read */
    if (s.v.nmembers > GROUP_MEMBERS ||
        strnlen(s.v.gpu_uuid, sizeof s.v.gpu_uuid) == sizeof s.v.gpu_uuid)
        abort();
    uint64_t sum = 0;
    for (unsigned i = 0; i < s.v.nmembers; i++) {
        if (s.v.members[i].pid <= 0)
            abort();
        sum = sum + s.v.members[i].used < sum ? UINT64_MAX : sum + s.v.members[i].used;
    }
    if (sum != s.v.used)
        abort();
    if (slices_unused(&s) > s.v.cap)
        abort();
    if (slices_promises(&s, 0, "GPU-x", 1ULL << 40) && s.v.cap > (1ULL << 40))
        abort();
    return 0;
}
