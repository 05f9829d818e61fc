/* swap: the fast path. What moves is the swap table (swaptable.c): physical
 * allocations, each mapped whole at one address. Suspend: close the gate,
 * wait for every context's work, copy each allocation to the host pool on
 * several streams, then unmap and release it, keeping its address range.
 * Resume: create each allocation again, map it where it was, give it the
 * access it had (its own GPU's and its peers', reach.c), copy back, open
 * the gate. The driver's handle changes; the application's does not.
 * Memory pools are libvramcap's own (ownpool.c), made of entries of
 * the table; the memory graphs keep cached goes back to the driver at a
 * suspend (graph.c). Any memory the table cannot move (managed, the
 * driver's memory pools, a graph's live allocations, arrays, IPC, pieces) makes
 * suspend refuse with the reason, so that the caller can use the driver's
 * checkpoint instead. */
#include "shim/swap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/units.h"
#include "host/clock.h"
#include "shim/driver.h"
#include "shim/gate.h"
#include "shim/graph.h"
#include "shim/hostmem.h"
#include "shim/ownpool.h"
#include "shim/reach.h"
#include "shim/share.h"
#include "shim/shim.h"
#include "shim/spill.h"

#define STREAMS 4
#define PIECE   (64ULL << 20)
/* how long an overlapped resume waits for the memory another process is
 * giving back (a driver checkpoint of 32 GiB takes ~18 s) */
#define OVERLAP_WAIT_MS 120000

static bool suspended;
static CUcontext primary[SHIM_MAX_DEVICES]; /* the context swaps use, per device */
static CUevent *events;                     /* one per allocation: its copy is done */
static unsigned nevents;
static int events_dev = -1;                             /* the device whose context made them */
static CUstream streams[SHIM_MAX_DEVICES][STREAMS + 1]; /* the last: the disk tier's */
/* The pieces that go to (or come from) the spill file in this move, in
 * place order: copied after the host memory's, through staging. */
static struct spill_extent *plan;
static unsigned nplan, cplan;
static uint64_t disk_in_ms; /* the last resume's reading of the spill file */

static bool dev_ok(int dev)
{
    return dev >= 0 && dev < SHIM_MAX_DEVICES;
}

bool swap_suspended(void)
{
    return suspended;
}

/* The devices the process has memory or contexts on (bit = CUdevice).
 * Table locked. */
static uint64_t devices_used(void)
{
    uint64_t d = 0;
    for (unsigned i = 0; i < shim.swaptable.n; i++)
        if (dev_ok(shim.swaptable.v[i].prop.location.id))
            d |= 1ULL << shim.swaptable.v[i].prop.location.id;
    pthread_mutex_lock(&shim.ctx_mu);
    for (int dev = 0; dev < SHIM_MAX_DEVICES; dev++)
        if (shim.primary_used[dev] || primary[dev])
            d |= 1ULL << dev;
    for (unsigned i = 0; i < shim.nctx; i++)
        if (dev_ok(shim.ctx_dev[i]))
            d |= 1ULL << shim.ctx_dev[i];
    pthread_mutex_unlock(&shim.ctx_mu);
    return d;
}

static CUresult enter_device(int dev);

/* The first reason this process cannot be moved, or NULL. Table locked. */
static const char *blocker(char *buf, size_t len)
{
    static const struct {
        enum allocs_kind kind;
        const char *what;
    } kinds[] = {
        {ALLOCS_MANAGED, "managed memory (cuMemAllocManaged)"},
        {ALLOCS_ASYNC, "memory from a stream-ordered pool of the driver's (one made shareable "
                       "with other processes, imported from one, or not on a GPU)"},
        {ALLOCS_ARRAY, "CUDA arrays"},
        {ALLOCS_IPC, "memory opened from another process (cuIpcOpenMemHandle)"},
        {ALLOCS_IMPORTED, "memory imported from another process"},
        {ALLOCS_FIXED, "pitched or non-VMM linear memory"},
    };
    char sz[32];
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (shim.allocs.bytes[kinds[i].kind]) {
            snprintf(buf, len, "it holds %s of %s",
                     units_fmt_size(shim.allocs.bytes[kinds[i].kind], sz, sizeof sz),
                     kinds[i].what);
            return buf;
        }
    if (shim.swaptable.block[SWAPTABLE_PIECES])
        return "it maps physical memory in pieces or more than once";
    if (shim.swaptable.block[SWAPTABLE_EXPORTED])
        return "it exported GPU memory to another process";
    for (unsigned i = 0; i < shim.swaptable.n; i++)
        if (shim.swaptable.v[i].odd_access)
            return "it gave memory access to a location that is not a GPU it can name";
        else if (!dev_ok(shim.swaptable.v[i].prop.location.id))
            return "it holds memory on a device it cannot name";
    /* asked in one of the device's contexts, where the driver answers */
    uint64_t devs = devices_used();
    for (int dev = 0; dev < SHIM_MAX_DEVICES; dev++)
        if (devs >> dev & 1 && enter_device(dev) == CUDA_SUCCESS && graph_blocker(dev, buf, len))
            return buf;
    if (share_blocker(buf, len))
        return buf;
    if (!gate_supported())
        return "this build cannot hold threads (fast swap needs x86-64)";
    if (!gate_complete())
        return "it looked up more driver entry points than libvramcap can hold";
    return NULL;
}

/* What a swap moves: the mapped allocations, their bytes (and count in
 * *n when asked); a memory pool's chunk with nothing allocated from it is given
 * back and made again, but has no bytes to move. Table locked. */
static uint64_t mapped_bytes(unsigned *n)
{
    uint64_t b = 0;
    unsigned k = 0;
    for (unsigned i = 0; i < shim.swaptable.n; i++)
        if (shim.swaptable.v[i].va && !shim.swaptable.v[i].idle) {
            b += shim.swaptable.v[i].size;
            k++;
        }
    if (n)
        *n = k;
    return b;
}

int swap_check(uint64_t *bytes, unsigned *allocations, char *why, size_t len)
{
    pthread_mutex_lock(&shim.swaptable.mu);
    unsigned n;
    uint64_t b = mapped_bytes(&n);
    const char *w = blocker(why, len);
    if (w && w != why)
        snprintf(why, len, "%s", w);
    pthread_mutex_unlock(&shim.swaptable.mu);
    *bytes = b;
    *allocations = n;
    return w ? -1 : 0;
}

/* A context of dev made current on this thread, with streams: the primary
 * one if the application uses it, else one the application made (retaining
 * the primary context would cost a context's worth of VRAM). */
static CUresult enter_device(int dev)
{
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&shim.ctx_mu);
    for (unsigned i = 0; !primary[dev] && !shim.primary_used[dev] && i < shim.nctx; i++)
        if (shim.ctx_dev[i] == dev)
            primary[dev] = shim.ctx[i];
    pthread_mutex_unlock(&shim.ctx_mu);
    if (!primary[dev])
        rc = real_cuDevicePrimaryCtxRetain(&primary[dev], dev);
    if (rc == CUDA_SUCCESS)
        rc = real_cuCtxSetCurrent(primary[dev]);
    for (int i = 0; rc == CUDA_SUCCESS && i < STREAMS; i++)
        if (!streams[dev][i])
            rc = real_cuStreamCreate(&streams[dev][i], 1 /* non-blocking */);
    return rc;
}

/* Waits for every context of the process: the one used for each device
 * it allocated on, and those it made itself. */
static CUresult finish_work(void)
{
    CUresult rc = CUDA_SUCCESS;
    for (unsigned i = 0; rc == CUDA_SUCCESS && i < shim.swaptable.n; i++) {
        int dev = shim.swaptable.v[i].prop.location.id;
        if (!primary[dev])
            rc = enter_device(dev);
    }
    for (int dev = 0; rc == CUDA_SUCCESS && dev < SHIM_MAX_DEVICES; dev++)
        if (primary[dev] && (rc = real_cuCtxSetCurrent(primary[dev])) == CUDA_SUCCESS)
            rc = real_cuCtxSynchronize();
    pthread_mutex_lock(&shim.ctx_mu);
    for (unsigned i = 0; rc == CUDA_SUCCESS && i < shim.nctx; i++)
        if ((rc = real_cuCtxSetCurrent(shim.ctx[i])) == CUDA_SUCCESS)
            rc = real_cuCtxSynchronize();
    pthread_mutex_unlock(&shim.ctx_mu);
    return rc;
}

static CUresult plan_add(CUdeviceptr d, uint64_t off, uint64_t n, int dev)
{
    if (nplan && plan[nplan - 1].dev == dev && plan[nplan - 1].dptr + plan[nplan - 1].n == d &&
        plan[nplan - 1].off + plan[nplan - 1].n == off) {
        plan[nplan - 1].n += n; /* one run: the staging cuts it as it likes */
        return CUDA_SUCCESS;
    }
    if (nplan == cplan) {
        unsigned c = cplan ? 2 * cplan : 64;
        struct spill_extent *np = realloc(plan, c * sizeof *np);
        if (!np)
            return CUDA_ERROR_OUT_OF_MEMORY;
        plan = np;
        cplan = c;
    }
    plan[nplan++] = (struct spill_extent){d, off, n, dev};
    return CUDA_SUCCESS;
}

/* The disk tier's way in: dev's context, and a stream of its own (not one
 * the host copies queue on). */
static CUresult spill_enter(int dev, CUstream *s)
{
    CUresult rc = enter_device(dev);
    if (rc == CUDA_SUCCESS && !streams[dev][STREAMS])
        rc = real_cuStreamCreate(&streams[dev][STREAMS], 1 /* non-blocking */);
    *s = streams[dev][STREAMS];
    return rc;
}

/* Copies one allocation out (to_host) or in, piece by piece, on one
 * stream; then records its event, so that it can be released (out) while
 * the copies of the others still run. Streams take allocations in turn. */
static CUresult copy_one(unsigned i, bool to_host)
{
    struct swaptable_entry *p = &shim.swaptable.v[i];
    int dev = p->prop.location.id;
    if (p->idle)
        return CUDA_SUCCESS;
    CUresult rc = enter_device(dev);
    CUstream s = streams[dev][i % STREAMS];
    for (uint64_t off = 0, n; rc == CUDA_SUCCESS && off < p->size; off += n) {
        n = p->size - off < PIECE ? p->size - off : PIECE;
        if (hostmem_in_file(p->host_off + off, &n)) {
            rc = plan_add(p->va + off, p->host_off + off, n, dev);
            continue;
        }
        char *host = hostmem_at(p->host_off + off, &n, &rc); /* a piece may end first */
        if (!host)
            break;
        rc = to_host ? real_cuMemcpyDtoHAsync_v2(host, p->va + off, n, s)
                     : real_cuMemcpyHtoDAsync_v2(p->va + off, host, n, s);
    }
    if (rc == CUDA_SUCCESS && i < nevents && dev == events_dev)
        rc = real_cuEventRecord(events[i], s);
    return rc;
}

/* Waits for every copy on every stream. */
static CUresult sync_streams(void)
{
    CUresult rc = CUDA_SUCCESS;
    for (int dev = 0; dev < SHIM_MAX_DEVICES; dev++)
        for (int i = 0; primary[dev] && i < STREAMS; i++)
            if (streams[dev][i]) {
                CUresult r = real_cuCtxSetCurrent(primary[dev]);
                if (r == CUDA_SUCCESS)
                    r = real_cuStreamSynchronize(streams[dev][i]);
                if (rc == CUDA_SUCCESS)
                    rc = r;
            }
    return rc;
}

/* One event per allocation, kept between swaps. */
static CUresult ensure_events(void)
{
    if (nevents >= shim.swaptable.n)
        return CUDA_SUCCESS;
    CUevent *ne = realloc(events, shim.swaptable.n * sizeof *ne);
    if (!ne)
        return CUDA_ERROR_OUT_OF_MEMORY;
    events = ne;
    CUresult rc = CUDA_SUCCESS;
    if (events_dev < 0)
        events_dev = shim.swaptable.v[0].prop.location.id;
    while (rc == CUDA_SUCCESS && nevents < shim.swaptable.n) {
        if ((rc = enter_device(events_dev)) == CUDA_SUCCESS &&
            (rc = real_cuEventCreate(&events[nevents], 2 /* no timing */)) == CUDA_SUCCESS)
            nevents++;
    }
    return rc;
}

/* Starts copying every mapped allocation out; drop_all waits for each. */
static CUresult copy_out(void)
{
    nplan = 0;
    CUresult rc = ensure_events();
    for (unsigned i = 0; rc == CUDA_SUCCESS && i < shim.swaptable.n; i++)
        if (shim.swaptable.v[i].va)
            rc = copy_one(i, true);
    if (rc != CUDA_SUCCESS)
        sync_streams();
    return rc;
}

/* Waits until the copies of entries i to j are done. */
static CUresult copied(unsigned i, unsigned j)
{
    CUresult rc = CUDA_SUCCESS;
    for (unsigned k = i; rc == CUDA_SUCCESS && k < j; k++)
        rc = k < nevents && shim.swaptable.v[k].prop.location.id == events_dev
                 ? real_cuEventSynchronize(events[k])
                 : sync_streams();
    return rc;
}

/* Places every mapped allocation in the host pool (host_off holds its place,
 * hostmem_at's position, while swapped out). */
static int place_all(uint64_t *grow_ms, char *err, size_t len)
{
    uint64_t left = mapped_bytes(NULL);
    hostmem_begin();
    for (unsigned i = 0; i < shim.swaptable.n; i++) {
        struct swaptable_entry *p = &shim.swaptable.v[i];
        if (!p->va || p->idle)
            continue;
        if (hostmem_take(p->size, left, &p->host_off, grow_ms, err, len) < 0)
            return -1;
        left -= p->size;
    }
    return 0;
}

/* The end of the run of entries from i whose mappings follow one another
 * inside one of the application's reservations, all resident or all not:
 * PyTorch maps a segment's pages one after the other, and one driver call
 * unmaps or grants a whole run (16 GiB in 20 MiB pages is 820 calls
 * otherwise). libvramcap's own allocations each have a reservation of
 * their own. */
static unsigned run_end(unsigned i)
{
    const struct swaptable_entry *v = shim.swaptable.v;
    long res = v[i].own ? -1 : swaptable_res_of(&shim.swaptable, v[i].va);
    unsigned j = i + 1;
    while (res >= 0 && j < shim.swaptable.n && !v[j].own && v[j].va &&
           v[j].va == v[j - 1].va + v[j - 1].size && !v[j].real == !v[i].real &&
           v[j].prop.location.id == v[i].prop.location.id &&
           swaptable_res_of(&shim.swaptable, v[j].va) == res)
        j++;
    return j;
}

static uint64_t run_bytes(unsigned i, unsigned j)
{
    return shim.swaptable.v[j - 1].va + shim.swaptable.v[j - 1].size - shim.swaptable.v[i].va;
}

/* Unmaps and releases everything mapped, each run as soon as its copies
 * are done (with wait_copies; the others still run meanwhile): the VRAM
 * goes back to the driver, the address ranges stay reserved. */
static CUresult drop_all(bool wait_copies)
{
    CUresult rc = CUDA_SUCCESS;
    for (unsigned i = 0, j; rc == CUDA_SUCCESS && i < shim.swaptable.n; i = j) {
        j = i + 1;
        if (!shim.swaptable.v[i].va || !shim.swaptable.v[i].real)
            continue;
        j = run_end(i);
        if (wait_copies && (rc = copied(i, j)) != CUDA_SUCCESS)
            break;
        rc = real_cuMemUnmap(shim.swaptable.v[i].va, run_bytes(i, j));
        for (unsigned k = i; rc == CUDA_SUCCESS && k < j; k++) {
            struct swaptable_entry *p = &shim.swaptable.v[k];
            /* the application's references and ours: the mapping held one */
            int refs = p->own ? 1 : p->refs;
            for (int r = 0; rc == CUDA_SUCCESS && r < refs; r++)
                rc = real_cuMemRelease(p->real);
            if (rc == CUDA_SUCCESS)
                p->real = 0;
        }
    }
    return rc;
}

/* Gives back what make_all made before it failed. */
static void unmake(void)
{
    for (unsigned i = 0; i < shim.swaptable.n; i++) {
        struct swaptable_entry *p = &shim.swaptable.v[i];
        if (p->made) {
            real_cuMemUnmap(p->va, p->size);
            real_cuMemRelease(p->real);
            p->real = 0;
            p->made = false;
        }
    }
}

/* With an overlapped resume: waits until dev has size bytes free above
 * floor, while another process is giving its memory back, so that this
 * one never takes the GPU's last floor bytes from everyone else. The
 * current context is dev's. */
static CUresult room_for(uint64_t size, uint64_t floor, uint64_t deadline)
{
    for (;;) {
        size_t fr = 0, tot = 0;
        if (real_cuMemGetInfo_v2(&fr, &tot) != CUDA_SUCCESS || fr >= size + floor)
            return CUDA_SUCCESS;
        if (clock_mono_ms() >= deadline)
            return CUDA_ERROR_OUT_OF_MEMORY;
        struct timespec ts = {0, 200 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Makes, maps and grants again everything dropped, and starts copying
 * each back as soon as it is mapped (the next is made while it copies).
 * floor (overlapped resume): another process is moving off the GPU right
 * now; each allocation waits for its room above floor (room_for) instead
 * of failing. On failure, what this call made is released again and err
 * says what was missing. */
static int make_all(uint64_t floor, char *err, size_t len)
{
    CUresult rc = CUDA_SUCCESS;
    uint64_t need = 0, deadline = clock_mono_ms() + OVERLAP_WAIT_MS;
    int dev = 0, floor_dev = -1;
    nplan = 0;
    for (unsigned i = 0; floor && floor_dev < 0 && i < shim.swaptable.n; i++)
        if (shim.swaptable.v[i].va && !shim.swaptable.v[i].real)
            floor_dev = shim.swaptable.v[i].prop.location.id;
    for (unsigned i = 0; i < shim.swaptable.n; i++) {
        struct swaptable_entry *p = &shim.swaptable.v[i];
        if (!p->va || p->real)
            continue;
        need += p->size;
        if (rc != CUDA_SUCCESS)
            continue;
        CUmemGenericAllocationHandle h = 0;
        dev = p->prop.location.id;
        bool waits = dev == floor_dev;
        if (waits && (rc = enter_device(dev)) == CUDA_SUCCESS)
            rc = room_for(p->size, floor, deadline);
        while (rc == CUDA_SUCCESS &&
               (rc = real_cuMemCreate(&h, p->size, &p->prop, 0)) == CUDA_ERROR_OUT_OF_MEMORY &&
               waits && clock_mono_ms() < deadline) { /* freed memory is not always free at once */
            struct timespec ts = {0, 500 * 1000};
            nanosleep(&ts, NULL);
            rc = CUDA_SUCCESS;
        }
        if (rc != CUDA_SUCCESS)
            continue;
        if ((rc = real_cuMemMap(p->va, p->size, 0, h, 0)) != CUDA_SUCCESS) {
            real_cuMemRelease(h);
            continue;
        }
        p->real = h;
        p->made = true;
        /* the access it had, its peers' included (reach.c) */
        if ((rc = reach_grant(p)) == CUDA_SUCCESS)
            rc = copy_one(i, false);
    }
    /* the disk's part while the host memory's copies run */
    bool disk_failed = false;
    uint64_t d0 = clock_mono_ms();
    if (rc == CUDA_SUCCESS && nplan &&
        spill_in(hostmem_file(), plan, nplan, spill_enter, err, len) < 0)
        disk_failed = true;
    disk_in_ms = nplan ? clock_mono_ms() - d0 : 0;
    CUresult r = sync_streams();
    if (rc == CUDA_SUCCESS)
        rc = r;
    if (disk_failed) {
        unmake();
        size_t at = strlen(err);
        snprintf(err + at, len - at, "; still suspended");
        return -1;
    }
    if (rc == CUDA_SUCCESS) {
        for (unsigned i = 0; i < shim.swaptable.n; i++)
            shim.swaptable.v[i].made = shim.swaptable.v[i].idle = false;
        return 0;
    }
    unmake();
    char a[32];
    if (rc == CUDA_ERROR_OUT_OF_MEMORY)
        snprintf(err, len,
                 "resuming needs %s on GPU %d and the driver said out of memory%s; still "
                 "suspended",
                 units_fmt_size(need, a, sizeof a), dev,
                 floor_dev >= 0 ? " (the memory given back in time was not enough)" : "");
    else
        snprintf(err, len, "bringing %s back to GPU %d failed (error %d); still suspended",
                 units_fmt_size(need, a, sizeof a), dev, rc);
    return -1;
}

/* The application's references as they were: the new allocation came with
 * one reference, which its mapping holds. */
static void restore_refs(void)
{
    for (unsigned i = 0; i < shim.swaptable.n; i++) {
        struct swaptable_entry *p = &shim.swaptable.v[i];
        if (p->own || !p->va || !p->real)
            continue;
        if (p->refs == 0)
            real_cuMemRelease(p->real);
        for (int r = 1; r < p->refs && real_cuMemRetainAllocationHandle; r++) {
            CUmemGenericAllocationHandle h;
            real_cuMemRetainAllocationHandle(&h, (void *)(uintptr_t)p->va);
        }
    }
}

/* A memory pool's chunk with nothing allocated from it (no thread can allocate:
 * they all wait at the gate). Table locked. */
static void mark_idle(uint64_t va, void *arg)
{
    (void)arg;
    struct swaptable_entry *p = swaptable_by_va(&shim.swaptable, va);
    if (p && p->chunk)
        p->idle = true;
}

int swap_suspend(unsigned timeout_ms, struct swap_stats *st, char *err, size_t len)
{
    memset(st, 0, sizeof *st);
    if (hostmem_daemon() && !hostmem_held() && hostmem_file() < 0) {
        snprintf(err, len,
                 "this process swaps into host memory the daemon gives it: ask the daemon "
                 "(vram suspend MODEL)");
        return -1;
    }
    if (suspended) {
        snprintf(err, len, "already suspended");
        return -1;
    }
    uint64_t t = clock_mono_ms();
    unsigned busy = 0;
    bool evicted = false;
    if (gate_close(timeout_ms, &busy) < 0) {
        snprintf(err, len, "%u driver call%s still running after %u ms; not suspended", busy,
                 busy == 1 ? " was" : "s were", timeout_ms);
        return -1;
    }
    st->gate_ms = clock_mono_ms() - t;
    pthread_mutex_lock(&shim.swaptable.mu);
    const char *why = blocker(err, len);
    if (why) {
        if (why != err)
            snprintf(err, len, "%s", why);
        goto refuse;
    }
    t = clock_mono_ms();
    CUresult rc = finish_work();
    st->sync_ms = clock_mono_ms() - t;
    if (rc != CUDA_SUCCESS) {
        snprintf(err, len, "the GPU reported error %d while finishing the process's work", rc);
        goto refuse;
    }
    /* the memory graphs keep cached for their next launch goes back to
     * the driver; that launch maps it again, at the same addresses */
    uint64_t devs = devices_used();
    for (int dev = 0; dev < SHIM_MAX_DEVICES; dev++)
        if (devs >> dev & 1 &&
            ((rc = enter_device(dev)) != CUDA_SUCCESS || graph_trim(dev, err, len) < 0)) {
            if (rc != CUDA_SUCCESS)
                snprintf(err, len, "GPU %d's context could not be entered (error %d)", dev, rc);
            goto refuse;
        }
    /* whoever maps this process's memory lets go of it, and waits */
    if (share_evict(timeout_ms, err, len) < 0)
        goto refuse;
    evicted = true;
    ownpool_each_idle(mark_idle, NULL);
    if (place_all(&st->hostpool_ms, err, len) < 0)
        goto refuse;
    hostmem_end();
    t = clock_mono_ms();
    if ((rc = copy_out()) != CUDA_SUCCESS) {
        snprintf(err, len, "copying to host memory failed (error %d)", rc);
        goto refuse;
    }
    /* what host memory could not take goes to disk, whole, before any
     * VRAM is let go: a full disk leaves the process as it was */
    if (nplan) {
        uint64_t d0 = clock_mono_ms();
        uint64_t from = UINT64_MAX, end = 0;
        for (unsigned k = 0; k < nplan; k++) {
            from = plan[k].off < from ? plan[k].off : from;
            end = plan[k].off + plan[k].n > end ? plan[k].off + plan[k].n : end;
        }
        int bad = spill_reserve(hostmem_file(), from, end, err, len) < 0 ||
                  spill_out(hostmem_file(), plan, nplan, spill_enter, err, len) < 0;
        st->disk_ms = clock_mono_ms() - d0;
        if (bad) {
            sync_streams();
            goto refuse;
        }
    }
    /* each allocation is released once its copy is done, while the
     * others still copy: the time out is the copies' */
    rc = drop_all(true);
    sync_streams();
    st->copy_ms = clock_mono_ms() - t;
    if (rc != CUDA_SUCCESS) {
        snprintf(err, len, "moving GPU memory out failed (error %d)", rc);
        char e2[160];
        if (make_all(0, e2, sizeof e2) == 0)
            restore_refs();
        goto refuse;
    }
    st->bytes = mapped_bytes(&st->allocations);
    st->disk = hostmem_file_bytes();
    suspended = true;
    pthread_mutex_unlock(&shim.swaptable.mu);
    return 0;
refuse:
    for (unsigned i = 0; i < shim.swaptable.n; i++)
        shim.swaptable.v[i].idle = false;
    if (evicted) /* the memory is where it was: they may have it again */
        share_back();
    pthread_mutex_unlock(&shim.swaptable.mu);
    gate_open();
    return -1;
}

int swap_resume(uint64_t floor, struct swap_stats *st, char *err, size_t len)
{
    memset(st, 0, sizeof *st);
    if (!suspended) {
        snprintf(err, len, "not suspended");
        return -1;
    }
    pthread_mutex_lock(&shim.swaptable.mu);
    uint64_t t = clock_mono_ms();
    /* what comes back is what went out (empty memory pool chunks are made again
     * with no bytes to copy) */
    st->bytes = mapped_bytes(&st->allocations);
    st->disk = hostmem_file_bytes();
    /* the host copy stays intact whatever fails: the process stays out */
    if (make_all(floor, err, len) < 0) {
        pthread_mutex_unlock(&shim.swaptable.mu);
        return -1;
    }
    st->copy_ms = clock_mono_ms() - t;
    st->disk_ms = disk_in_ms;
    restore_refs();
    share_back(); /* whoever let go of this process's memory maps it again */
    suspended = false;
    pthread_mutex_unlock(&shim.swaptable.mu);
    gate_open();
    return 0;
}

void swap_after_resume(bool keep_chunks)
{
    if (suspended)
        return;
    hostmem_file_close(); /* its bytes are on the GPU again: the daemon removes it */
    /* the daemon's memory back to the daemon (unless it asked to keep it
     * ready for the next suspend), and this process's own too: under the
     * daemon, RAM is held for swaps only as the daemon decides */
    if (hostmem_daemon()) {
        if (!keep_chunks)
            hostmem_drop_chunks();
        hostmem_drop();
    } else if (hostmem_policy() == HOSTMEM_NONE) {
        hostmem_drop();
    }
}

void swap_drop(void)
{
    if (!suspended) {
        hostmem_drop_chunks();
        hostmem_file_close();
    }
}

int swap_spill(uint64_t bytes, uint64_t *ms, char *err, size_t len)
{
    *ms = 0;
    if (!suspended) {
        snprintf(err, len, "not suspended: nothing to move to disk");
        return -1;
    }
    uint64_t t = clock_mono_ms();
    pthread_mutex_lock(&shim.swaptable.mu);
    int rc = hostmem_demote(bytes, err, len);
    pthread_mutex_unlock(&shim.swaptable.mu);
    *ms = clock_mono_ms() - t;
    return rc;
}

int swap_prepare(uint64_t *hostpool_ms, char *err, size_t len)
{
    *hostpool_ms = 0;
    if (suspended)
        return 0;
    if (hostmem_daemon()) { /* the daemon's chunks, pinned ahead of the next suspend */
        uint64_t t = clock_mono_ms(), b;
        unsigned n;
        if (swap_check(&b, &n, err, len) < 0) /* the driver's path will move it */
            return -1;
        pthread_mutex_lock(&shim.swaptable.mu);
        int dev = shim.swaptable.n ? shim.swaptable.v[0].prop.location.id : -1;
        CUresult r = dev_ok(dev) ? enter_device(dev) : CUDA_ERROR_NOT_FOUND;
        pthread_mutex_unlock(&shim.swaptable.mu);
        if (r != CUDA_SUCCESS) {
            snprintf(err, len, "no GPU memory to swap yet: nothing to prepare for");
            return -1;
        }
        int rc = hostmem_pin_chunks(err, len);
        *hostpool_ms = clock_mono_ms() - t;
        return rc;
    }
    pthread_mutex_lock(&shim.swaptable.mu);
    uint64_t need = mapped_bytes(NULL);
    int rc = 0;
    uint64_t have = hostmem_bytes();
    pthread_mutex_unlock(&shim.swaptable.mu);
    if (need > have)
        rc = hostmem_grow(need - have, hostpool_ms, err, len);
    return rc;
}

int swap_ready_step(uint64_t step, uint64_t *hostpool_ms, char *err, size_t len)
{
    *hostpool_ms = 0;
    if (suspended || hostmem_daemon())
        return 0;
    pthread_mutex_lock(&shim.swaptable.mu);
    uint64_t need = mapped_bytes(NULL), have = hostmem_bytes();
    int dev = shim.swaptable.n ? shim.swaptable.v[0].prop.location.id : -1;
    /* pinning wants a context current on this thread */
    CUresult r = need > have && dev_ok(dev) ? enter_device(dev) : CUDA_ERROR_NOT_FOUND;
    pthread_mutex_unlock(&shim.swaptable.mu);
    if (need <= have || r != CUDA_SUCCESS)
        return 0;
    /* at most a two-hundredth of it a step: the host pool has 256 regions */
    uint64_t n = need - have, least = need / 200;
    step = step > least ? step : least;
    return hostmem_grow(n < step ? n : step, hostpool_ms, err, len) < 0 ? -1 : 1;
}
