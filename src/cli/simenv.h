/* simenv: `vram --sim FILE` and VRAM_SIM=FILE (FILE a machine file, or the
 * name of an example shipped with vram). Checks the machine file, then
 * re-executes vram with the simulated driver libraries first on the library
 * path, so that vram and every process it starts load them instead of
 * NVIDIA's. The only place the product knows a simulation exists. */
#ifndef VRAM_CLI_SIMENV_H
#define VRAM_CLI_SIMENV_H

#include <stdbool.h>
#include <stddef.h>

/* file: from --sim, or NULL to look at VRAM_SIM. Returns 0 when there is no
 * simulation or it is in place; on success of a re-exec it does not return;
 * a negative code (message in err) when the file or the libraries are bad. */
int simenv_apply(const char *file, char **argv, char *err, size_t errlen);

/* Whether `vram --sim NAME` works here: the simulated driver and the
 * example machine NAME are shipped with this vram. */
bool simenv_hint(const char *name);

#endif
