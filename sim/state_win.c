/* state_win: the simulated driver's ledger on Windows (sim/state.h), for
 * nvml.dll under wine. The Windows build simulates NVML only: no simulated
 * CUDA allocates there, so the ledger is this process's own, in memory, and
 * the machine file's processes are all there is. Live processes are named
 * as NVML names them on Windows: by their image's full path. */
#include "sim/state.h"

#include <windows.h>

#include <stdlib.h>
#include <string.h>

/* 100 ns ticks between 1601 and 1970 */
#define EPOCH_DIFF 116444736000000000ULL

static SRWLOCK lock = SRWLOCK_INIT;

static uint64_t filetime_u64(FILETIME ft)
{
    return ((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime;
}

uint64_t sim_now_ms(void)
{
    FILETIME ft;
    GetSystemTimeAsFileTime(&ft);
    return (filetime_u64(ft) - EPOCH_DIFF) / 10000;
}

int sim_state_proc_name(uint32_t pid, char *buf, size_t len)
{
    HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid);
    if (!h)
        return -1;
    DWORD n = (DWORD)len;
    BOOL ok = QueryFullProcessImageNameA(h, 0, buf, &n);
    CloseHandle(h);
    return ok ? 0 : -1;
}

uint64_t sim_state_start_of(int32_t pid)
{
    HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)pid);
    if (!h)
        return 0;
    FILETIME c, e, k, u;
    uint64_t t = GetProcessTimes(h, &c, &e, &k, &u) ? filetime_u64(c) : 0;
    CloseHandle(h);
    return t;
}

int sim_state_open(struct sim_state *s, const char *machine_path)
{
    (void)machine_path;
    s->fd = -1;
    s->ledger = calloc(1, sizeof *s->ledger);
    if (!s->ledger)
        return -1;
    s->ledger->nslots = SIM_SLOTS;
    s->ledger->created_ms = sim_now_ms();
    return 0;
}

void sim_state_close(struct sim_state *s)
{
    free(s->ledger);
    s->ledger = NULL;
}

void sim_state_lock(struct sim_state *s)
{
    (void)s;
    AcquireSRWLockExclusive(&lock);
}

void sim_state_unlock(struct sim_state *s)
{
    (void)s;
    ReleaseSRWLockExclusive(&lock);
}

uint64_t sim_state_used(struct sim_state *s, unsigned gpu)
{
    uint64_t sum = 0;
    for (unsigned i = 0; i < SIM_SLOTS; i++)
        if (s->ledger->slots[i].pid > 0 && s->ledger->slots[i].gpu == gpu)
            sum += s->ledger->slots[i].used;
    return sum;
}

uint64_t sim_state_used_bound(struct sim_state *s, unsigned gpu)
{
    return sim_state_used(s, gpu);
}

static struct sim_slot *own_slot(struct sim_state *s, unsigned vgpu, bool create)
{
    int32_t self = (int32_t)GetCurrentProcessId();
    struct sim_slot *free_slot = NULL;
    for (unsigned i = 0; i < SIM_SLOTS; i++) {
        struct sim_slot *sl = &s->ledger->slots[i];
        if (sl->pid == self && sl->vgpu == vgpu)
            return sl;
        if (!sl->pid && !free_slot)
            free_slot = sl;
    }
    if (!create || !free_slot)
        return NULL;
    memset(free_slot, 0, sizeof *free_slot);
    free_slot->pid = self;
    free_slot->gpu = free_slot->vgpu = vgpu;
    return free_slot;
}

int sim_state_charge(struct sim_state *s, unsigned gpu, unsigned type, int64_t delta)
{
    struct sim_slot *sl = own_slot(s, gpu, true);
    if (!sl)
        return -1;
    if (delta < 0 && (uint64_t)-delta > sl->used)
        return -1;
    sl->used = (uint64_t)((int64_t)sl->used + delta);
    sl->type |= type;
    return 0;
}

unsigned sim_state_actual(struct sim_state *s, unsigned vgpu)
{
    struct sim_slot *sl = own_slot(s, vgpu, false);
    return sl ? sl->gpu : vgpu;
}

/* Windows has no PID namespaces: the driver and every reader know a
 * process by the same pid. */
uint32_t sim_slot_listed_pid(const struct sim_slot *sl)
{
    return sl->listed ? sl->listed : (uint32_t)sl->pid;
}

uint32_t sim_state_ckpt_self(struct sim_state *s)
{
    (void)s;
    return 0;
}

void sim_state_busy(struct sim_state *s, unsigned gpu)
{
    struct sim_slot *sl = own_slot(s, gpu, true);
    if (sl)
        sl->busy_ms = sim_now_ms();
}
