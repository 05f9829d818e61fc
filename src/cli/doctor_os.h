/* doctor_os: what `vram doctor` asks of the OS beyond the snapshot, its
 * own facts and the rules that use them: on Linux another GPU for the
 * display (/sys) and an MPS daemon (/proc), cli/doctor_os.c; on Windows the
 * display adapters, hardware-accelerated GPU scheduling and the record of
 * `vram headless on`, win/windoctor.c. */
#ifndef VRAM_CLI_DOCTOR_OS_H
#define VRAM_CLI_DOCTOR_OS_H

#include <stdio.h>

#include "core/doctor.h"
#include "probe/probe.h"

/* The findings on s (up to max into out; how many), host's watch and time
 * set by the caller and its OS facts filled here. procroot and sysroot:
 * where Linux reads processes and devices (unused on Windows). */
size_t doctor_os_examine(const struct snap *s, struct doc_host *host, const char *procroot,
                         const char *sysroot, struct doc_finding *out, size_t max);

/* The text report's notes under its findings, if any: on Windows, why the
 * per-process figures are missing. */
void doctor_os_notes(struct probe *p, FILE *out);

#endif
