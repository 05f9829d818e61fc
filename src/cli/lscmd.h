/* lscmd: a llama-swap command as the argument list llama-swap runs, and
 * that list as the command line vram serve runs. llama-swap runs a cmd or
 * cmdStop with no shell: its lines whose first non-blank is '#' taken out,
 * a '\' that ends a line made a blank, then the text split into words as a
 * POSIX shell splits them ('...', "...", backslashes), nothing expanded:
 * ';', '|', '>', '$(...)', backticks, '$HOME', '~' are letters of an
 * argument. vram serve runs `sh -c "exec COMMAND"` (with ${PORT} and
 * ${PID} filled in first): lscmd_join writes the words so that this shell
 * hands the program the same list. */
#ifndef VRAM_CLI_LSCMD_H
#define VRAM_CLI_LSCMD_H

#include <stddef.h>

#define LSCMD_MAX_ARGS 4096

struct lscmd {
    char **argv; /* argc words, then NULL; malloc'd */
    size_t argc;
};

/* text split as llama-swap splits a command (comment lines out, a line's
 * closing '\' a blank, POSIX words). 0, or -1 (out of memory, or more than
 * LSCMD_MAX_ARGS words); no words at all is argc 0. lscmd_free after. */
int lscmd_split(const char *text, struct lscmd *c);

/* c's words as one line of sh words that give back exactly these words
 * (quoted where they need it; ${PORT} and ${PID} left as they are, for
 * vram serve fills them in before the shell reads the line; a ';' never
 * after a blank, which an INI reader would take for a comment). malloc'd,
 * or NULL. */
char *lscmd_join(const struct lscmd *c);

void lscmd_free(struct lscmd *c);

#endif
