/* Fuzz target: the simulated machine's JSON file. Any input: an error
 * message or a machine, never a crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/machine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct sim_machine m;
    char err[512];
    if (sim_machine_parse((const char *)data, size, "fuzz.json", &m, err, sizeof err) == 0) {
        for (unsigned i = 0; i < m.ngpus; i++)
            if (m.gpus[i].nprocs > SIM_MAX_PROCS)
                abort();
    } else if (!memchr(err, '\0', sizeof err) || err[0] == '\0') {
        abort(); /* an error always says something */
    }
    return 0;
}
