/* snapshot: the plain data every layer agrees on. The GPU layer and the host
 * layer fill it, core/ computes over it, the CLI prints it. No behaviour here. */
#ifndef VRAM_CORE_SNAPSHOT_H
#define VRAM_CORE_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a process uses a GPU, as NVML's three process lists say; a bit set. */
enum snap_ptype {
    SNAP_PT_COMPUTE = 1u << 0,
    SNAP_PT_GRAPHICS = 1u << 1,
    SNAP_PT_MPS = 1u << 2,
    SNAP_PT_FD = 1u << 3, /* holds /dev/nvidia* open, listed by no NVML list */
};

enum snap_role { SNAP_ROLE_OTHER = 0, SNAP_ROLE_DISPLAY, SNAP_ROLE_WORKLOAD };

/* Process state letter from /proc/PID/stat, folded to what matters here. */
enum snap_pstate {
    SNAP_PS_UNKNOWN = 0,
    SNAP_PS_RUNNING,
    SNAP_PS_SLEEPING,
    SNAP_PS_STOPPED,
    SNAP_PS_ZOMBIE,
};

#define SNAP_NAME_MAX      64
#define SNAP_USER_MAX      32
#define SNAP_CMD_MAX       256
#define SNAP_CONTAINER_MAX 80

struct snap_proc {
    uint32_t pid;
    unsigned types;  /* enum snap_ptype bits */
    bool used_known; /* NVML may say "not available" (no rights, WDDM) */
    uint64_t used;   /* bytes on this GPU */
    enum snap_role role;
    /* from the host; empty or zero when the process is not visible to us */
    bool host_known;
    char name[SNAP_NAME_MAX];
    char user[SNAP_USER_MAX];
    uint32_t uid;
    char cmdline[SNAP_CMD_MAX];
    enum snap_pstate state;
    uint32_t ppid;
    uint64_t start_time;                /* seconds since the epoch */
    char container[SNAP_CONTAINER_MAX]; /* "docker:0123456789ab", "" on the host */
    /* from libvramcap's group, for processes under `vram run`: the slice
     * (shared by the group) and what libvramcap counted for this process */
    uint64_t cap;
    uint64_t counted;
    /* when the driver last saw it do GPU work, microseconds since the epoch;
     * 0: not seen since vram started watching (SNAP_HAVE_ACTIVITY) */
    uint64_t busy_us;
    /* used came from Windows' GPU performance counters (dedicated usage, as
     * Task Manager shows it): WDDM gave NVML no figure for this process */
    bool used_wddm;
    /* the model of vram serve it belongs to (cli/served.h), "" for none:
     * the daemon's to stop (vram unload), never reclaim's */
    char model[SNAP_NAME_MAX];
    /* its share of the GPU in the driver's newest utilization sample (of
     * the last few seconds; 0 when it did no work meanwhile), percent of
     * the SMs, the memory controller, the encoder and the decoder;
     * util_known: its GPU keeps such samples (SNAP_HAVE_ACTIVITY) */
    bool util_known;
    uint8_t sm_util, mem_util, enc_util, dec_util;
    /* from the host with the fields above: resident memory and CPU time
     * since it started (rss_known); cpu_pct, 100 a CPU, over the time since
     * the probe last saw the same process (cpu_known) */
    bool rss_known, cpu_known;
    uint64_t rss;
    uint64_t cpu_ms;
    double cpu_pct;
};

/* Optional GPU fields: a bit says the driver answered. */
enum snap_have {
    SNAP_HAVE_UTIL = 1u << 0,
    SNAP_HAVE_POWER = 1u << 1,
    SNAP_HAVE_POWER_LIMIT = 1u << 2,
    SNAP_HAVE_ENERGY = 1u << 3,
    SNAP_HAVE_TEMP = 1u << 4,
    SNAP_HAVE_PSTATE = 1u << 5,
    SNAP_HAVE_PERSISTENCE = 1u << 6,
    SNAP_HAVE_COMPUTE_MODE = 1u << 7,
    SNAP_HAVE_DISPLAY = 1u << 8,
    SNAP_HAVE_MIG = 1u << 9,
    SNAP_HAVE_PCIE = 1u << 10,
    SNAP_HAVE_FAN = 1u << 11,
    SNAP_HAVE_MEMORY = 1u << 12,
    SNAP_HAVE_PROCS = 1u << 13,
    SNAP_HAVE_ACTIVITY = 1u << 14, /* per-process utilization samples */
    SNAP_HAVE_DRIVER_MODEL = 1u << 15, /* Windows: WDDM, TCC or MCDM */
    SNAP_HAVE_CLOCKS = 1u << 16,       /* graphics, SM and memory clocks now */
    SNAP_HAVE_MAX_CLOCKS = 1u << 17,   /* and their maximum */
    SNAP_HAVE_ENCODER = 1u << 18,      /* the video encoder's utilization */
    SNAP_HAVE_DECODER = 1u << 19,      /* the video decoder's */
    SNAP_HAVE_PCIE_THROUGHPUT = 1u << 20, /* bytes over the PCIe link each way */
};

/* The driver model on Windows (nvmlDeviceGetDriverModel). Under WDDM the
 * driver gives no per-process memory figures. */
enum snap_driver_model { SNAP_DM_WDDM = 0, SNAP_DM_TCC, SNAP_DM_MCDM };

struct snap_mem {
    uint64_t total, reserved, used, free;
    /* 2: nvmlDeviceGetMemoryInfo_v2, used excludes the driver's reserve;
     * 1: the old call, where used includes it and reserved is unknown. */
    int version;
};

struct snap_gpu {
    unsigned index;
    unsigned minor; /* /dev/nvidiaN */
    char name[96];
    char uuid[96];
    char pci_bus_id[32];
    unsigned have; /* enum snap_have bits */
    struct snap_mem mem;
    unsigned util_gpu, util_mem;       /* percent */
    unsigned power_mw, power_limit_mw; /* milliwatts */
    uint64_t energy_mj;                /* since the driver loaded */
    unsigned temp_c;
    int pstate; /* 0..15 */
    bool persistence;
    int compute_mode; /* NVML: 0 default, 2 prohibited, 3 exclusive process */
    bool display_attached, display_active;
    bool mig;
    unsigned pcie_gen, pcie_width;
    unsigned fan_pct;
    enum snap_driver_model driver_model; /* SNAP_HAVE_DRIVER_MODEL */
    unsigned clock_gfx_mhz, clock_sm_mhz, clock_mem_mhz; /* SNAP_HAVE_CLOCKS */
    unsigned max_sm_mhz, max_mem_mhz;                    /* SNAP_HAVE_MAX_CLOCKS */
    unsigned enc_util, dec_util;                         /* percent */
    /* KB/s sent (tx) and received (rx) by the GPU over its link, counted
     * by the driver over 20 ms (SNAP_HAVE_PCIE_THROUGHPUT) */
    unsigned pcie_tx_kbs, pcie_rx_kbs;
    struct snap_proc *procs;
    size_t nprocs;
};

struct snap {
    char driver_version[32];
    char nvml_version[32];
    int cuda_version;  /* 12040 for 12.4, 0 when unknown */
    uint64_t taken_ms; /* wall clock, milliseconds since the epoch */
    struct snap_gpu *gpus;
    size_t ngpus;
};

void snap_free(struct snap *s);

/* dst becomes a copy of src with arrays of its own (what dst held is
 * freed first). 0, or -1 when memory runs out (dst then holds a part). */
int snap_copy(struct snap *dst, const struct snap *src);

#endif
