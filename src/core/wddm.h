/* wddm: Windows's own per-process GPU memory figures, for the processes
 * whose memory WDDM hides from NVML (NVML_VALUE_NOT_AVAILABLE). They come
 * from the "GPU Process Memory" performance counters, whose Dedicated
 * Usage Task Manager shows per process: one instance per process and
 * adapter, named "pid_1234_luid_0x00000000_0x0000C2F1_phys_0". Pure: the
 * counter values in (win/winpdh.c reads them, tests feed a recorded set),
 * the snapshot's figures out. */
#ifndef VRAM_CORE_WDDM_H
#define VRAM_CORE_WDDM_H

#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"

/* One process's dedicated GPU memory on one adapter. */
struct wddm_usage {
    uint32_t pid;
    uint64_t luid; /* the adapter's LUID, HighPart << 32 | LowPart */
    uint64_t dedicated;
};

#define WDDM_MAX 4096

/* The counters' figures, summed per process and adapter (a linked adapter
 * has one instance per physical GPU, phys_0, phys_1...). */
struct wddm_set {
    struct wddm_usage v[WDDM_MAX];
    size_t n;
    size_t rejected; /* instance names that were not pid_N_luid_H_L_phys_P */
};

/* "pid_1234_luid_0x00000000_0x0000C2F1_phys_0": 0 with pid and luid, -1
 * for any other name. */
int wddm_parse_instance(const char *name, uint32_t *pid, uint64_t *luid);

/* Adds one instance's value (bytes) to set; an unreadable name counts in
 * set->rejected. */
void wddm_add(struct wddm_set *set, const char *instance, double bytes);

/* The adapter of g among those the counters name: the LUID under which the
 * most of the processes NVML lists on g hold dedicated memory. 0 when no
 * LUID holds one of them, or two hold as many (vram would be guessing). */
uint64_t wddm_luid_of(const struct snap_gpu *g, const struct wddm_set *set);

/* Gives each process of g that NVML listed without a figure its dedicated
 * usage under luid (used_wddm). Returns how many got one. */
size_t wddm_apply(struct snap_gpu *g, const struct wddm_set *set, uint64_t luid);

#endif
