/* probe: one snapshot of the machine, the GPU layer's figures joined with
 * the host's knowledge of each process, refreshed in place so that a live
 * view can sample the cheap parts often and the costly parts seldom. */
#ifndef VRAM_PROBE_H
#define VRAM_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"

struct probe;

enum probe_what {
    /* memory; and unless PROBE_LEAN, utilization, power, temperature */
    PROBE_MEMORY = 0,
    PROBE_PROCS = 1u << 0,   /* NVML's process lists, joined with /proc */
    /* scan /proc/ * /fd for /dev/nvidia* holders: every descriptor of every
     * process, milliseconds a thousand descriptors (110 ms on a build
     * machine holding 21,000) */
    PROBE_HOLDERS = 1u << 1,
    /* modes, limits, links, fan: the costly calls (milliseconds on a first
     * sample), on threads of their own while the rest is read
     * (probe/slowcalls.h); a first sample asks them unless PROBE_LEAN */
    PROBE_SLOW = 1u << 2,
    PROBE_ENERGY = 1u << 3,  /* total energy: 3 ms a GPU on an H200 */
    /* per-process utilization samples, remembered across samples: sets
     * busy_us of each process (and SNAP_HAVE_ACTIVITY) */
    PROBE_ACTIVITY = 1u << 4,
    PROBE_METERS = 1u << 5, /* clocks, video encoder and decoder: a live view's */
    /* PCIe throughput: 40 ms a GPU in the driver, so a thread of the probe
     * reads it (probe/pcie.h): each such sample asks it for fresh figures
     * and takes the latest it has */
    PROBE_PCIE = 1u << 6,
    /* the CUDA driver's version, once: it loads libcuda (milliseconds),
     * unless the user's cache has it for this driver */
    PROBE_CUDA = 1u << 7,
    /* the holders' scan on a thread: each such sample starts one if none
     * runs and takes the last one that has finished (a live view, which
     * must not wait for it) */
    PROBE_HOLDERS_BG = 1u << 8,
    /* the memory view only, as nvidia-smi's memory query asks: no gauges
     * (a process's first asking of them costs milliseconds, 3.6 ms on an
     * H100), and of the slow tier only the driver model (Windows' WDDM or
     * TCC; Linux answers at once that it has none), also on a first
     * sample. vram status without --all. */
    PROBE_LEAN = 1u << 9,
    PROBE_ALL = PROBE_PROCS | PROBE_HOLDERS | PROBE_SLOW,
};

/* procroot: "/proc", or a fixture tree for tests. */
int probe_open(struct probe **out, const char *procroot, char *err, size_t errlen);

/* probe_open, and while NVML starts (15-18 ms on an H200) the slow part of
 * the first sample that asks for ahead's PROBE_HOLDERS (the /proc scan)
 * and PROBE_CUDA (loading libcuda) done on threads, so that a command that
 * samples once waits for the longest of them only. */
int probe_open_ahead(struct probe **out, const char *procroot, unsigned ahead, char *err,
                     size_t errlen);
void probe_close(struct probe *p);

/* The process is about to exit: skip the driver's slow shutdown. */
void probe_exiting(struct probe *p);

/* The process ends by _exit right after probe_close (cmd_exit_now): the
 * shutdown skipped, and NVML left loaded, its destructors unrun. */
void probe_ending(struct probe *p);

/* Refreshes s (zeroed before the first call, then reused). Process arrays
 * are replaced only when PROBE_PROCS is asked for; a process's CPU % is
 * over the time since the last PROBE_PROCS sample. now_ms: wall clock. */
int probe_sample(struct probe *p, struct snap *s, unsigned what, uint64_t now_ms);

/* What the OS says of one process, on a GPU or not (a parent in top's
 * tree): the host fields of out (pid set by the caller). -1 when it is not
 * there. */
int probe_host(struct probe *p, struct snap_proc *out);

/* What top's details of a process show beyond the snapshot's fields. */
struct probe_detail {
    char cmdline[4096]; /* the whole command line, made safe to print */
    char cgroup[512];   /* its cgroup ("" where the OS has none) */
};

int probe_detail(struct probe *p, uint32_t pid, struct probe_detail *d);

#endif
