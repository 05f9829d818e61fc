/* groupforge: what a hostile local user can put in the shared folder, for
 * tests/cli/shared.sh: a well-formed group file saying whatever they like.
 * usage: groupforge FILE CAP UUID [--mode OCTAL] [--creator PID]
 *                   [--member PID] [--hold]
 * Writes FILE (in $VRAM_RUN_DIR) as an admitted slice of CAP on the GPU
 * UUID (index 0), made by PID (default: this process), listing PID as a
 * member, with the mode given; with --hold it takes the file's lock, says
 * "holding" and keeps it until killed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/units.h"
#include "host/proc.h"
#include "ipc/group.h"

int main(int argc, char **argv)
{
    uint64_t cap;
    if (argc < 4 || units_parse_size(argv[2], &cap) < 0) {
        fprintf(stderr, "usage: groupforge FILE CAP UUID [--mode OCTAL] [--creator PID] "
                        "[--member PID] [--hold]\n");
        return 2;
    }
    unsigned mode = 0644;
    int32_t creator = (int32_t)getpid(), member = 0;
    int hold = 0;
    for (int i = 4; i < argc; i++) {
        if (!strcmp(argv[i], "--mode") && i + 1 < argc)
            mode = (unsigned)strtoul(argv[++i], NULL, 8);
        else if (!strcmp(argv[i], "--creator") && i + 1 < argc)
            creator = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--member") && i + 1 < argc)
            member = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--hold"))
            hold = 1;
        else
            return 2;
    }
    char made[GROUP_PATH_MAX];
    struct group g;
    if (group_create(made, sizeof made, cap, 0, argv[3], 0) < 0 || rename(made, argv[1]) < 0 ||
        group_open(&g, argv[1]) < 0) {
        perror("groupforge");
        return 1;
    }
    struct group_shared *sh = g.sh;
    sh->state = GROUP_ADMITTED;
    sh->creator = creator;
    sh->creator_start = hostproc_start_ticks((uint32_t)creator);
    if (member) {
        sh->members[0].pid = member;
        sh->members[0].start = hostproc_start_ticks((uint32_t)member);
        sh->members[0].used = 1 << 20;
    }
    if (chmod(argv[1], mode) < 0) {
        perror("groupforge: chmod");
        return 1;
    }
    if (!hold)
        return 0;
    pthread_mutex_lock(&sh->lock);
    printf("holding\n");
    fflush(stdout);
    for (;;)
        pause();
}
