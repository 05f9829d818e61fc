/* windoctor: `vram doctor` on Windows: doctor's rules (core/doctor.c) with
 * the Windows facts and fixes (core/doctor_win.c), printed as on Linux. */
#ifndef VRAM_WIN_WINDOCTOR_H
#define VRAM_WIN_WINDOCTOR_H

#include "cli/cmd.h"

extern const struct cmd_entry windoctor_entry;

#endif
