/* winheadless: `vram headless` on Windows (the seed's switch, done safely:
 * a plan first, --yes to act, `off` to undo), and the display adapters it
 * sees, which doctor asks about too. */
#ifndef VRAM_WIN_WINHEADLESS_H
#define VRAM_WIN_WINHEADLESS_H

#include "cli/cmd.h"
#include "core/headless_win.h"

extern const struct cmd_entry winheadless_entry;

/* The display adapters (SetupAPI) and HwSchMode. */
void winheadless_scan(struct hw_state *s);

#endif
