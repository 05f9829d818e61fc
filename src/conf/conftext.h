/* conftext: vram.conf as text, before inih reads it (config.c reads what
 * it says). */
#ifndef VRAM_DAEMON_CONFTEXT_H
#define VRAM_DAEMON_CONFTEXT_H

#include <stdbool.h>
#include <stddef.h>

#define CONFTEXT_MAX_BYTES (1 << 20) /* a larger file is no vram.conf */

/* The configuration's text (malloc'd): a regular file only (a FIFO would
 * wedge the daemon on SIGHUP), at most CONFTEXT_MAX_BYTES, and one only
 * root or this user can change, since its commands run as this user.
 * NULL with err. */
char *conftext_read(const char *path, char *err, size_t len);

/* A section given twice, or a setting twice in one section, read as inih
 * reads lines: inih merges the first and joins the second's command to
 * the first's, silently. True with the first repeat, both its lines, in
 * err. */
bool conftext_repeats(const char *text, const char *path, char *err, size_t len);

/* inih keeps CONFTEXT_INI_SECTION - 1 characters of a section's name and
 * drops the rest silently: [model hf.co/bartowski/Llama-3.2-3B-GGUF:Q4_K_M]
 * would be another model. A copy of text (malloc'd) for inih where each
 * longer [model NAME] is [model @K], its line otherwise as it was, and
 * NAME the K-th of names (*n of them, at most max); NULL when out of
 * memory. '@' is in no model's name (core/modelname.h). */
#define CONFTEXT_INI_SECTION 50
#define CONFTEXT_SECTION_MAX 200 /* a longer line is refused (conftext_long_line) */
char *conftext_short_sections(const char *text, char (*names)[CONFTEXT_SECTION_MAX], size_t max,
                              size_t *n);

/* The first line inih could not read whole (0: none), and its length. */
unsigned conftext_long_line(const char *text, size_t *len);

#endif
