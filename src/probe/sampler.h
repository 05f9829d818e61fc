/* sampler: the daemon's GPU snapshots, taken on a thread of their own.
 * NVML's process lists take milliseconds at best and seconds when the
 * driver is busy (a process pinning gigabytes, a checkpoint), so the loop
 * never asks it: the sampler takes a snapshot every period, or sooner when
 * asked, and the loop copies the latest when told one is ready. */
#ifndef VRAM_PROBE_SAMPLER_H
#define VRAM_PROBE_SAMPLER_H

#include <stdint.h>

#include "core/snapshot.h"

struct event_base;
struct probe;
struct sampler;

/* Starts sampling p (which the sampler alone uses from now on) every
 * period_ms; fresh(arg) runs on the loop's thread when a snapshot is
 * ready. NULL when no thread can be started. */
struct sampler *sampler_start(struct event_base *base, struct probe *p, unsigned period_ms,
                              void (*fresh)(void *arg), void *arg);

/* Asks for a snapshot taken from now on; its generation, which
 * sampler_take reports once it is there. */
uint64_t sampler_ask(struct sampler *s);

/* The latest snapshot, copied into dst; its generation. */
uint64_t sampler_take(struct sampler *s, struct snap *dst);

/* Stops the thread (the probe is the caller's again). */
void sampler_stop(struct sampler *s);

#endif
