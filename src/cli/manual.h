/* manual: the man pages built into vram, as man renders them (the table is
 * generated at build time from docs/man/PAGE.scd by docs/man/manual.py), so
 * that `vram help` shows the same text where the pages are not installed. */
#ifndef VRAM_CLI_MANUAL_H
#define VRAM_CLI_MANUAL_H

#include <stddef.h>

struct manual_page {
    const char *name; /* "vram", "vram-status", "vram.conf" */
    const char *text;
};

/* generated: manual_npages entries, then {NULL, NULL} */
extern const struct manual_page manual_pages[];
extern const size_t manual_npages;

/* The text of the page called name, or NULL. */
const char *manual_find(const char *name);

#endif
