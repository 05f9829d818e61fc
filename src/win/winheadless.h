/* winheadless: what `vram headless` does on Windows (cli/headless_os.h:
 * the seed's switch, done safely: a plan first, --yes to act, `off` to
 * undo), and the display adapters it sees, which doctor asks about too. */
#ifndef VRAM_WIN_WINHEADLESS_H
#define VRAM_WIN_WINHEADLESS_H

#include "cli/headless_os.h"
#include "core/headless_win.h"

/* The display adapters (SetupAPI) and HwSchMode. */
void winheadless_scan(struct hw_state *s);

#endif
