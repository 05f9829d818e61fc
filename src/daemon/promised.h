/* promised: the daemon's side of every user's slices (issue 28, item 5).
 * Its placement counts what others' live slices (`vram run`, another
 * daemon's models) promise and have not taken as taken; and each of its
 * own models is a promise `vram run` sees: a capped model's group files
 * are charged by its processes, an uncapped model's are its reservation,
 * told here what the model holds. */
#ifndef VRAM_DAEMON_PROMISED_H
#define VRAM_DAEMON_PROMISED_H

#include <stdbool.h>
#include <stdint.h>

struct daemon;

/* out[g] for each of the scheduler's GPUs: what the live slices there
 * promise and have not taken, this daemon's own models' files left out. */
void promised_others(const struct daemon *d, uint64_t *out);

/* The scheduler's foreign memory on each GPU: what others held at the last
 * snapshot (d->held_by_others) and what others' slices promise now. */
void promised_apply(struct daemon *d);

/* Whether model i's processes charge its group files themselves (a cap
 * under libvramcap); else its files are a reservation the daemon keeps. */
bool promised_self_charged(const struct daemon *d, unsigned i);

/* Tells each running uncapped model's reservation what the model holds on
 * each of its GPUs, from the snapshot just taken. */
void promised_note(const struct daemon *d);

#endif
