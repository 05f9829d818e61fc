/* textsafe: text another party controls (a process's name and command
 * line, a user name from NSS, a model's name from its file, a line of a
 * model's log, a daemon's answer), made safe to print on a terminal: no
 * byte of it can be taken by the terminal as a command. C0 controls (ESC,
 * BEL, CR, BS...), DEL, C1 controls (U+0080 to U+009F, and the bare bytes
 * 0x80 to 0x9F an 8-bit terminal reads as CSI and friends), bidirectional
 * overrides (U+202A to U+202E, U+2066 to U+2069: text shown in another
 * order than it reads) and bytes that are no UTF-8 become '?'. Valid
 * UTF-8 otherwise stays as it is. The one sanitiser: every place that
 * prints such text goes through it (issue 28, item 9). */
#ifndef VRAM_CORE_TEXTSAFE_H
#define VRAM_CORE_TEXTSAFE_H

#include <stddef.h>

/* s made safe in place (it never grows). Returns s. */
char *textsafe(char *s);

/* The first n bytes of in (a NUL among them ends it), made safe into
 * out[len]; cut at a character's boundary to fit. Returns out. */
char *textsafe_copy(const char *in, size_t n, char *out, size_t len);

#endif
