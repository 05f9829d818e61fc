/* rootfs: applying a headless plan to a root (/ or a test tree) so that it
 * can be undone exactly: every file replaced or set aside is kept, every
 * directory created is noted, in a record under var/lib/vram/headless. */
#ifndef VRAM_HOST_ROOTFS_H
#define VRAM_HOST_ROOTFS_H

#include <stddef.h>
#include <stdint.h>

#include "core/headless.h"

#define ROOTFS_STATE "var/lib/vram/headless"

/* rel under root as the user should read it: "/etc/x" for "/", else
 * "ROOT/etc/x" (trailing slashes of root dropped). */
void rootfs_path(const char *root, const char *rel, char *out, size_t len);

/* 1 when a plan is applied (since: its time, seconds since the epoch), 0
 * when not, -1 when the record is damaged (err says where). */
int rootfs_applied(const char *root, int64_t *since, char *err, size_t len);

/* Checks a record's text: how many changes it lists, or -1 with err. For
 * tests and the fuzzer. */
int rootfs_parse(const char *text, size_t len, char *err, size_t errlen);

/* Whether every file of the plan can be written: nothing is changed.
 * Returns 0, or -1 with err naming the place and the fix. */
int rootfs_check(const char *root, const struct hl_plan *p, char *err, size_t len);

/* Applies the plan, now being the time to record. On failure, what was
 * done is undone and err says why; returns 0 or -1. */
int rootfs_apply(const char *root, const struct hl_plan *p, int64_t now, char *err, size_t len);

/* What `off` would do, one line each ("remove /etc/X11/...") through fn.
 * Returns how many, 0 when nothing is applied, -1 with err if damaged. */
int rootfs_plan_revert(const char *root, void (*fn)(const char *line, void *arg), void *arg,
                       char *err, size_t len);

/* Puts back what the record says was changed, then removes the record.
 * Each step can be repeated, so a revert that failed half-way (a file
 * busy, a disk full) can be run again. Returns 0 or -1 with err. */
int rootfs_revert(const char *root, char *err, size_t len);

#endif
