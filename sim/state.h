/* state: the simulated driver's memory ledger, shared by every process that
 * joins the same simulated machine (a file in /dev/shm, mapped, flock'ed),
 * so that an allocation in one process shows in another's NVML. */
#ifndef VRAM_SIM_STATE_H
#define VRAM_SIM_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/machine.h"

#define SIM_SLOTS 1024

struct sim_slot {
    int32_t pid;    /* 0: free */
    uint32_t gpu;   /* where its memory is now */
    uint64_t start; /* the process's start time in ticks, against pid reuse */
    uint64_t used;
    uint32_t type;    /* SIM_PT_* */
    uint32_t vgpu;    /* the GPU as the process knows it (a restore may move it) */
    uint64_t busy_ms; /* when it last did GPU work (copies, sets), 0: never */
    uint32_t ckpt;    /* CUprocessState: running, locked, checkpointed */
    uint32_t listed;  /* the pid NVML lists it under, 0: its own (see sim_state_listed) */
    uint64_t host; /* bytes a checkpoint moved to host memory */
    uint32_t pidns; /* the process's PID namespace, in which pid is its pid */
    uint32_t pad;
};

struct sim_ledger {
    uint64_t magic;
    uint32_t version, nslots;
    uint64_t created_ms;
    struct sim_slot slots[SIM_SLOTS];
};

struct sim_state {
    int fd;
    struct sim_ledger *ledger;
};

/* Opens (creating if needed) the ledger of the machine file at path; the
 * ledger's name comes from VRAM_SIM_STATE, else from the file's real path. */
int sim_state_open(struct sim_state *s, const char *machine_path);
void sim_state_close(struct sim_state *s);

void sim_state_lock(struct sim_state *s);
void sim_state_unlock(struct sim_state *s);

/* Under the lock: bytes held on gpu by live processes; slots of processes
 * that died are freed on the way, as the real driver frees their memory. */
uint64_t sim_state_used(struct sim_state *s, unsigned gpu);

/* Under the lock: at least what sim_state_used says, without asking /proc
 * which processes live (what the slots hold, the dead included): when even
 * this leaves room, so does the exact figure. */
uint64_t sim_state_used_bound(struct sim_state *s, unsigned gpu);

/* Under the lock: adds delta (may be negative) to this process's slot. */
int sim_state_charge(struct sim_state *s, unsigned gpu, unsigned type, int64_t delta);

/* Under the lock: the GPU this process's vgpu now lives on. */
unsigned sim_state_actual(struct sim_state *s, unsigned vgpu);

/* Under the lock: the checkpoint state of this process (0: running). */
uint32_t sim_state_ckpt_self(struct sim_state *s);

/* Under the lock: this process did GPU work on gpu just now. */
void sim_state_busy(struct sim_state *s, unsigned gpu);

/* A process that runs in a PID namespace of its own (a container) is
 * listed by the driver under its pid in the host's namespace, a number it
 * does not know as its own. VRAM_SIM_PIDNS=1 in a process's environment
 * plays that: its slots are listed under SIM_PIDNS_SHIFT + its pid, a pid
 * no process of the machine can have. 0 for any other process. */
#define SIM_PIDNS_SHIFT 4194304u /* Linux's PID_MAX_LIMIT */
uint32_t sim_state_listed(int32_t pid);

/* The pid NVML lists a slot under, for a reader in this process's
 * namespace. The driver knows every process by its pid in the host's
 * namespace; one in a namespace of its own with its own /proc cannot say
 * it, so a reader looks for it by its namespace's pid and start time
 * (host/pidns.h), as the driver would know it. SIM_PIDNS_SHIFT + its pid
 * where the reader cannot see it. */
uint32_t sim_slot_listed_pid(const struct sim_slot *sl);

/* Start time (clock ticks after boot) of a pid, 0 if it is gone. */
uint64_t sim_state_start_of(int32_t pid);

uint64_t sim_now_ms(void);

/* What the driver names a live process: its command name from /proc on
 * Linux, its image's full path on Windows. -1 when it is gone. */
int sim_state_proc_name(uint32_t pid, char *buf, size_t len);

#endif
