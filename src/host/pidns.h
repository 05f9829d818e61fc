/* pidns: a process seen across PID namespaces. A process in a namespace of
 * its own with its own /proc (a container, Apptainer, unshare -p
 * --mount-proc) knows itself by a pid that means another process, or none,
 * outside; the driver, vram status and every other user know it by its
 * pid in the host's namespace, which it cannot learn. What it can say of
 * itself (its namespace, its pid there, its start time) is turned into the
 * pid a reader sees here. */
#ifndef VRAM_HOST_PIDNS_H
#define VRAM_HOST_PIDNS_H

#include <stdint.h>

/* The inode of this process's PID namespace (/proc/self/ns/pid), the same
 * number in every namespace; 0 when it cannot be read. */
uint32_t pidns_self(void);

/* The pid, in this reader's /proc, of the live process whose pid in its
 * own namespace ns is nspid and whose start time is start (as
 * hostproc_start_ticks says it): 0 when there is none this reader can see
 * (it exited, or lives in a namespace beside this one). Reads /proc/PID/stat
 * of every process, /proc/PID/status of those that started at that tick:
 * for the few processes of other namespaces, never on a hot path. */
uint32_t pidns_find(uint32_t ns, uint32_t nspid, uint64_t start);

#endif
