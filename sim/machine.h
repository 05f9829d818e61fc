/* machine: the simulated machine's description, read from a JSON file.
 * Shared by the simulated NVML and CUDA libraries and by `vram --sim`, which
 * checks the file before anything loads it. */
#ifndef VRAM_SIM_MACHINE_H
#define VRAM_SIM_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_MAX_GPUS   64
#define SIM_MAX_PROCS  32
#define SIM_MAX_ABSENT 32

enum { SIM_PT_COMPUTE = 1, SIM_PT_GRAPHICS = 2, SIM_PT_MPS = 4 };

struct sim_proc_def {
    uint32_t pid;
    char name[64];
    unsigned type;
    uint64_t used;
    /* its share of the GPU in the driver's utilization samples (percent),
     * sampled whenever asked when has_util */
    unsigned sm_util, mem_util, enc_util, dec_util;
    bool has_util;
};

struct sim_gpu_def {
    char name[96], uuid[96], pci_bus_id[32];
    uint64_t memory, reserved, hidden, context;
    unsigned power_mw, power_limit_mw, temp_c, util_gpu, util_mem, pstate, fan;
    unsigned pcie_gen, pcie_width, minor;
    unsigned link_mb_s; /* host<->device copies at most this fast (MB/s); 0: as fast as memcpy */
    unsigned clock_gfx, clock_sm, clock_mem, max_gfx, max_sm, max_mem; /* MHz */
    unsigned enc_util, dec_util;   /* percent */
    bool has_encoder;              /* data-center cards (H100, H200) have no NVENC */
    unsigned pcie_tx_kbs, pcie_rx_kbs; /* what nvmlDeviceGetPcieThroughput counts */
    int compute_mode, cc_major, cc_minor;
    bool has_fan; /* data-center cards have none: NOT_SUPPORTED */
    bool persistence, display_attached, display_active, mig;
    /* a Windows machine's driver model (NVML_DRIVER_*), -1 on Linux. Under
     * WDDM (0) the process lists give no memory figure (NOT_AVAILABLE), and
     * persistence mode, a Linux setting, is not supported */
    int driver_model;
    struct sim_proc_def procs[SIM_MAX_PROCS];
    unsigned nprocs;
};

struct sim_machine {
    char driver_version[32], nvml_version[32];
    int cuda_version;
    unsigned proc_record_size; /* what the _v3 process calls write: 24, or 32 (535) */
    char absent[SIM_MAX_ABSENT][64];
    unsigned nabsent;
    struct sim_gpu_def gpus[SIM_MAX_GPUS];
    unsigned ngpus;
};

/* Parses the file; on error returns -1 with "FILE:LINE:COL: what" or
 * "FILE: gpus[0].memory: what" in err. */
int sim_machine_load(const char *path, struct sim_machine *m, char *err, size_t errlen);

/* The same from text in memory; name stands for the file in messages. */
int sim_machine_parse(const char *text, size_t len, const char *name, struct sim_machine *m,
                      char *err, size_t errlen);

bool sim_machine_absent(const struct sim_machine *m, const char *fn);

#endif
