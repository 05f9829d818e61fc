/* conftext: vram.conf as text, before inih reads it (config.c reads what
 * it says). */
#ifndef VRAM_DAEMON_CONFTEXT_H
#define VRAM_DAEMON_CONFTEXT_H

#include <stdbool.h>
#include <stddef.h>

/* The configuration's text (malloc'd): a regular file only (a FIFO would
 * wedge the daemon on SIGHUP), at most CONFIG_MAX_BYTES, and one only
 * root or this user can change, since its commands run as this user.
 * NULL with err. */
char *conftext_read(const char *path, char *err, size_t len);

/* A section given twice, or a setting twice in one section, read as inih
 * reads lines: inih merges the first and joins the second's command to
 * the first's, silently. True with the first repeat, both its lines, in
 * err. */
bool conftext_repeats(const char *text, const char *path, char *err, size_t len);

/* The first line inih could not read whole (0: none), and its length. */
unsigned conftext_long_line(const char *text, size_t *len);

#endif
