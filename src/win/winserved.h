/* winserved: what cli/served.h asks of the OS, on Windows: nothing to
 * find, as no vram serve runs there. */
#ifndef VRAM_WIN_WINSERVED_H
#define VRAM_WIN_WINSERVED_H

#include "cli/served.h"

#endif
