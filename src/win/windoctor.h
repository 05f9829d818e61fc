/* windoctor: what `vram doctor` asks of Windows (cli/doctor_os.h): the
 * display adapters, HwSchMode, the record of `vram headless on`. */
#ifndef VRAM_WIN_WINDOCTOR_H
#define VRAM_WIN_WINDOCTOR_H

#include "cli/doctor_os.h"

#endif
