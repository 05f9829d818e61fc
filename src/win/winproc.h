/* winproc: Windows's process table, as the probe joins it to NVML's list:
 * each process's name and parent (CreateToolhelp32Snapshot), and where the
 * rights allow, its image's full path (QueryFullProcessImageNameW), owner
 * and start time. */
#ifndef VRAM_WIN_WINPROC_H
#define VRAM_WIN_WINPROC_H

#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"

struct winproc_ent {
    uint32_t pid, ppid;
    char exe[SNAP_NAME_MAX]; /* UTF-8, "python.exe" */
};

struct winproc_table {
    struct winproc_ent *v;
    size_t n;
};

/* Takes a new snapshot of the table (replacing t's). -1 when Windows gave
 * none (t is then empty). */
int winproc_scan(struct winproc_table *t);
void winproc_free(struct winproc_table *t);

/* Fills p's host fields from t and the process itself; -1 when t does not
 * have p->pid (it exited). */
int winproc_fill(const struct winproc_table *t, struct snap_proc *p);

/* UTF-16 to UTF-8, truncated to fit len; "" when it cannot convert. */
void winproc_utf8(const wchar_t *w, char *out, size_t len);

#endif
