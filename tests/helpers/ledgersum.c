/* ledgersum: what the simulated driver holds on one GPU, sampled as fast as
 * the ledger's lock allows until a file appears. For the stress test of a
 * group's cap (tests/cli/joinstress.sh): every sample is the driver's own
 * sum (dead processes dropped, as the driver drops them), taken under the
 * lock every allocation takes, so no sample sees half an update.
 * usage: ledgersum MACHINE GPU CAP STOP_FILE; prints
 * "samples N over M max BYTES" at the end. VRAM_SIM_STATE names the ledger. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "core/units.h"
#include "sim/state.h"

int main(int argc, char **argv)
{
    uint64_t cap;
    if (argc != 5 || units_parse_size(argv[3], &cap) < 0) {
        fprintf(stderr, "usage: ledgersum MACHINE GPU CAP STOP_FILE\n");
        return 2;
    }
    unsigned gpu = (unsigned)atoi(argv[2]);
    struct sim_state st;
    if (sim_state_open(&st, argv[1]) < 0) {
        perror("ledgersum: the ledger");
        return 1;
    }
    unsigned long long samples = 0, over = 0;
    uint64_t max = 0;
    printf("sampling\n");
    fflush(stdout);
    while (access(argv[4], F_OK) != 0) {
        sim_state_lock(&st);
        uint64_t used = sim_state_used(&st, gpu);
        sim_state_unlock(&st);
        samples++;
        if (used > cap)
            over++;
        if (used > max)
            max = used;
        /* leave the lock to the allocators between samples */
        struct timespec ts = {0, 500 * 1000};
        nanosleep(&ts, NULL);
    }
    printf("samples %llu over %llu max %llu\n", samples, over, (unsigned long long)max);
    return 0;
}
