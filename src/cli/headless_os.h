/* headless_os: what `vram headless status|on|off` does on each OS, below
 * the command (cli/cmd_headless.c): on Linux the display servers' files
 * under a root (cli/headless_os.c), on Windows the display adapters,
 * HwSchMode and pnputil (win/winheadless.c). Either way a plan first,
 * --yes to act, `off` to undo exactly. */
#ifndef VRAM_CLI_HEADLESS_OS_H
#define VRAM_CLI_HEADLESS_OS_H

#include <stdbool.h>
#include <stddef.h>

struct headless_opts {
    bool yes;            /* act, not only plan */
    bool show;           /* Linux: print the files `on` would write */
    bool disable_device; /* Windows: `on` disables the NVIDIA display adapter too */
    const char *root;    /* Linux: the tree worked on ("/") */
};

/* Whether o goes with verb ("status", "on" or "off"): 0, or -1 with why
 * (bad usage, exit 2). */
int headless_os_check(const char *verb, const struct headless_opts *o, char *why, size_t len);

/* Carries out verb with o; the exit code. */
int headless_os_run(const char *verb, const struct headless_opts *o);

#endif
