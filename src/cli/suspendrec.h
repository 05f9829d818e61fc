/* suspendrec: the record `vram suspend PID` leaves of the GPU a process
 * left (and its start time, and the bytes), for `vram resume PID --gpu`.
 * Records live in a folder of the suspending user's own under the run
 * directory (group_dir(), /dev/shm: every user writes there), which only
 * that user can write: another user can neither forge a record nor block
 * one by making its name first (issue 28, item 12). */
#ifndef VRAM_CLI_SUSPENDREC_H
#define VRAM_CLI_SUSPENDREC_H

#include <stddef.h>
#include <stdint.h>

struct suspendrec {
    unsigned long long start; /* the process's start time, in ticks */
    char uuid[96];            /* the GPU it left */
    unsigned long long bytes;
};

/* Writes pid's record: 0, or -1 with the reason (and what it costs) in
 * err. */
int suspendrec_write(int pid, const struct suspendrec *r, char *err, size_t len);

/* pid's record, as this user or root wrote it: 0, or -1 when there is
 * none to believe. */
int suspendrec_read(int pid, struct suspendrec *r);

/* The records this user (and root) wrote, up to max, into pids and recs:
 * how many. Records of processes gone since are the caller's to weed out
 * (their start times). */
size_t suspendrec_list(int *pids, struct suspendrec *recs, size_t max);

/* Removes this user's record of pid (resumed). */
void suspendrec_remove(int pid);

#endif
