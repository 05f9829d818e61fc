/* cuda_graph: stream capture, graphs and graph memory in the simulated
 * libcuda.so.1.
 *
 * A stream in capture records its work (memsets, copies, allocations and
 * frees) into a graph instead of doing it; streams that wait on an event
 * recorded in a capture join it. A graph is its nodes in the order they
 * were added (the simulation runs one at a time, which every dependency
 * order allows). A launch runs them on the GPU's memory as the driver
 * would.
 *
 * Graph memory, as the driver documents it: an allocation node's address
 * is fixed when the node is made (captured cuMemAllocAsync, or
 * cuGraphAddMemAllocNode) and stays the graph's for its life; physical
 * memory backs it from the first launch that allocates it, and stays
 * cached for the graph once freed (in the graph, or after it by
 * cuMemFreeAsync) until cuDeviceGraphMemTrim gives back what no
 * allocation uses. An allocation still live when its node runs again is
 * an error, unless the graph was instantiated to free it on launch. A
 * graph with memory nodes has one instantiation at a time. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim/cuda_internal.h"

#define EXPORT       SIM_EXPORT
#define MAX_CAPTURES 64
#define MAX_MEMBERS  16

struct gmem {
    CUdeviceptr va;
    size_t size;
    CUdevice dev;
    int fd;      /* the backing memory while backed, else -1 */
    bool live;   /* allocated by a launch, not freed yet */
    bool orphan; /* its graph is gone: released once freed */
    void *owner; /* the graph whose node made it */
};

enum node_kind { N_ALLOC, N_FREE, N_MEMSET, N_COPY };

struct CUgraphNode_st {
    enum node_kind kind;
    struct gmem *mem; /* alloc, free */
    struct simcu_op op;
};

struct CUgraph_st {
    struct CUgraphNode_st **nodes;
    unsigned n, cap;
    int execs;
    bool destroyed, has_mem;
};

struct CUgraphExec_st {
    struct CUgraph_st *g;
    unsigned long long flags;
};

struct capture {
    CUstream members[MAX_MEMBERS]; /* members[0] began it */
    unsigned nmembers;
    CUgraph g;
    uint64_t id;
    CUstreamCaptureMode mode;
    bool invalidated; /* a call the capture does not allow was made */
};

struct recorded {
    CUevent ev;
    struct capture *cap;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct capture *caps[MAX_CAPTURES];
static struct recorded recs[MAX_CAPTURES * 4];
static uint64_t next_id;
static struct gmem **mems;
static size_t nmems, cap_mems;
static __thread CUstreamCaptureMode thread_mode;

static void graph_gone(CUgraph g);

/* The capture stream s takes part in, or NULL. Lock held. */
static struct capture *capture_of(CUstream s)
{
    for (unsigned i = 0; s && i < MAX_CAPTURES; i++)
        for (unsigned k = 0; caps[i] && k < caps[i]->nmembers; k++)
            if (caps[i]->members[k] == s)
                return caps[i];
    return NULL;
}

static bool special(CUstream s)
{
    return s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

int simcu_capturing(CUstream s)
{
    pthread_mutex_lock(&mu);
    int r = capture_of(s) != NULL;
    pthread_mutex_unlock(&mu);
    return r;
}

static CUresult add_node(CUgraph g, enum node_kind kind, struct gmem *m, const struct simcu_op *op,
                         CUgraphNode *out)
{
    if (g->n == g->cap) {
        unsigned nc = g->cap ? g->cap * 2 : 16;
        struct CUgraphNode_st **nn = realloc(g->nodes, nc * sizeof *nn);
        if (!nn)
            return CUDA_ERROR_OUT_OF_MEMORY;
        g->nodes = nn;
        g->cap = nc;
    }
    struct CUgraphNode_st *n = calloc(1, sizeof *n);
    if (!n)
        return CUDA_ERROR_OUT_OF_MEMORY;
    n->kind = kind;
    n->mem = m;
    if (op)
        n->op = *op;
    g->nodes[g->n++] = n;
    if (m)
        g->has_mem = true;
    if (out)
        *out = n;
    return CUDA_SUCCESS;
}

int simcu_capture_forbid(CUstream s)
{
    pthread_mutex_lock(&mu);
    struct capture *c = capture_of(s);
    if (c)
        c->invalidated = true;
    pthread_mutex_unlock(&mu);
    return c != NULL;
}

int simcu_capture_op(CUstream s, const struct simcu_op *op, CUresult *rc)
{
    pthread_mutex_lock(&mu);
    struct capture *c = capture_of(s);
    if (c)
        *rc = c->invalidated ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
                             : add_node(c->g, op->kind == SIMCU_OP_MEMSET ? N_MEMSET : N_COPY,
                                        NULL, op, NULL);
    pthread_mutex_unlock(&mu);
    return c != NULL;
}

void simcu_capture_record(CUevent ev, CUstream s)
{
    pthread_mutex_lock(&mu);
    struct capture *c = capture_of(s);
    struct recorded *free_slot = NULL;
    for (unsigned i = 0; i < sizeof recs / sizeof recs[0]; i++) {
        if (recs[i].ev == ev) {
            recs[i].ev = NULL;
            recs[i].cap = NULL;
        }
        if (!recs[i].ev && !free_slot)
            free_slot = &recs[i];
    }
    if (c && free_slot)
        *free_slot = (struct recorded){ev, c};
    pthread_mutex_unlock(&mu);
}

int simcu_capture_join(CUstream s, CUevent ev)
{
    pthread_mutex_lock(&mu);
    struct capture *c = NULL;
    for (unsigned i = 0; i < sizeof recs / sizeof recs[0] && !c; i++)
        if (recs[i].ev == ev)
            c = recs[i].cap;
    int in = c != NULL;
    if (c && !special(s) && !capture_of(s) && c->nmembers < MAX_MEMBERS)
        c->members[c->nmembers++] = s;
    pthread_mutex_unlock(&mu);
    return in;
}

/* Reserves a graph allocation's address range. Lock held. */
static struct gmem *reserve(size_t size, CUdevice dev, void *owner)
{
    if (nmems == cap_mems) {
        size_t nc = cap_mems ? cap_mems * 2 : 32;
        struct gmem **nm = realloc(mems, nc * sizeof *nm);
        if (!nm)
            return NULL;
        mems = nm;
        cap_mems = nc;
    }
    struct gmem *m = calloc(1, sizeof *m);
    size_t n = simcu_round(size);
    void *va = mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (!m || va == MAP_FAILED) {
        free(m);
        if (va != MAP_FAILED)
            munmap(va, n);
        return NULL;
    }
    *m = (struct gmem){(CUdeviceptr)(uintptr_t)va, n, dev, -1, false, false, owner};
    mems[nmems++] = m;
    return m;
}

/* Physical memory behind a graph allocation, charged. Lock held. */
static CUresult back(struct gmem *m)
{
    if (m->fd >= 0)
        return CUDA_SUCCESS;
    CUresult rc = simcu_charge(m->dev, (int64_t)m->size);
    if (rc != CUDA_SUCCESS)
        return rc;
    int fd = memfd_create("vram-sim-graph", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)m->size) < 0 ||
        mmap((void *)(uintptr_t)m->va, m->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
             0) == MAP_FAILED ||
        simcu_track(m->va, m->size, 0, m->dev, SIMCU_GRAPH) < 0) {
        if (fd >= 0)
            close(fd);
        simcu_charge(m->dev, -(int64_t)m->size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    m->fd = fd;
    return CUDA_SUCCESS;
}

static void unback(struct gmem *m)
{
    if (m->fd < 0)
        return;
    size_t sz, ch;
    CUdevice dev;
    simcu_untrack(m->va, SIMCU_GRAPH, &sz, &ch, &dev);
    mmap((void *)(uintptr_t)m->va, m->size, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    close(m->fd);
    m->fd = -1;
    simcu_charge(m->dev, -(int64_t)m->size);
}

/* Its memory and its address range given back. Lock held. */
static void release(size_t i)
{
    struct gmem *m = mems[i];
    unback(m);
    munmap((void *)(uintptr_t)m->va, m->size);
    mems[i] = mems[--nmems];
    free(m);
}

static struct gmem *gmem_at(CUdeviceptr p, size_t *at)
{
    for (size_t i = 0; i < nmems; i++)
        if (mems[i]->va == p) {
            if (at)
                *at = i;
            return mems[i];
        }
    return NULL;
}

CUresult simcu_graph_alloc(CUdeviceptr *dptr, size_t size, CUdevice dev, CUstream s)
{
    pthread_mutex_lock(&mu);
    struct capture *c = capture_of(s);
    CUresult rc = !c               ? CUDA_ERROR_ILLEGAL_STATE
                  : c->invalidated ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
                                   : CUDA_SUCCESS;
    struct gmem *m = rc == CUDA_SUCCESS ? reserve(size, dev, c->g) : NULL;
    if (rc == CUDA_SUCCESS && !m)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (m && (rc = add_node(c->g, N_ALLOC, m, NULL, NULL)) == CUDA_SUCCESS)
        *dptr = m->va;
    pthread_mutex_unlock(&mu);
    return rc;
}

CUresult simcu_graph_free(CUdeviceptr p, CUstream s)
{
    pthread_mutex_lock(&mu);
    size_t at;
    struct gmem *m = gmem_at(p, &at);
    CUresult rc = CUDA_SUCCESS;
    if (s) {
        struct capture *c = capture_of(s);
        rc = !c   ? CUDA_ERROR_ILLEGAL_STATE
             : !m ? CUDA_ERROR_INVALID_VALUE /* only a graph's allocation */
                  : add_node(c->g, N_FREE, m, NULL, NULL);
    } else if (!m || !m->live) {
        rc = CUDA_ERROR_NOT_FOUND;
    } else {
        m->live = false;
        if (m->orphan)
            release(at);
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

static CUresult begin(CUstream s, CUstreamCaptureMode mode)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (special(s)) /* the legacy stream cannot capture */
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    CUgraph g = calloc(1, sizeof *g);
    struct capture *c = calloc(1, sizeof *c);
    pthread_mutex_lock(&mu);
    CUresult rc = !g || !c        ? CUDA_ERROR_OUT_OF_MEMORY
                  : capture_of(s) ? CUDA_ERROR_ILLEGAL_STATE
                                  : CUDA_ERROR_OUT_OF_MEMORY;
    for (unsigned i = 0; g && c && rc == CUDA_ERROR_OUT_OF_MEMORY && i < MAX_CAPTURES; i++)
        if (!caps[i]) {
            *c = (struct capture){
                .members = {s}, .nmembers = 1, .g = g, .id = ++next_id, .mode = mode};
            caps[i] = c;
            rc = CUDA_SUCCESS;
        }
    pthread_mutex_unlock(&mu);
    if (rc != CUDA_SUCCESS) {
        free(g);
        free(c);
    }
    return rc;
}

EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
    return begin(s, mode);
}

EXPORT CUresult cuStreamBeginCapture(CUstream s)
{
    return begin(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph *out)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    struct capture *c = capture_of(s);
    CUresult rc = !c                   ? CUDA_ERROR_ILLEGAL_STATE
                  : c->members[0] != s ? CUDA_ERROR_STREAM_CAPTURE_UNMATCHED
                                       : CUDA_SUCCESS;
    if (rc == CUDA_SUCCESS) {
        /* a lost capture ends with no graph */
        *out = c->invalidated ? NULL : c->g;
        if (c->invalidated) {
            c->g->destroyed = true;
            graph_gone(c->g);
            rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        }
        for (unsigned i = 0; i < MAX_CAPTURES; i++)
            if (caps[i] == c)
                caps[i] = NULL;
        for (unsigned i = 0; i < sizeof recs / sizeof recs[0]; i++)
            if (recs[i].cap == c)
                recs[i] = (struct recorded){NULL, NULL};
        free(c);
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

EXPORT CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *status)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    *status = simcu_capturing(s) ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamGetCaptureInfo(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    struct capture *c = capture_of(s);
    *status = c ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    if (c && id)
        *id = c->id;
    pthread_mutex_unlock(&mu);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    if (!mode || *mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode old = thread_mode;
    thread_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphCreate(CUgraph *out, unsigned flags)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!out || flags)
        return CUDA_ERROR_INVALID_VALUE;
    *out = calloc(1, sizeof **out);
    return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                                       size_t ndeps, CUDA_MEM_ALLOC_NODE_PARAMS *params)
{
    (void)deps;
    (void)ndeps;
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!node || !g || !params || params->bytesize == 0 || params->poolProps.handleTypes ||
        params->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (simcu_gpu(params->poolProps.location.id) < 0)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&mu);
    struct gmem *m = reserve(params->bytesize, params->poolProps.location.id, g);
    CUresult rc = m ? add_node(g, N_ALLOC, m, NULL, node) : CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS)
        params->dptr = m->va;
    pthread_mutex_unlock(&mu);
    return rc;
}

EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                                      size_t ndeps, CUdeviceptr p)
{
    (void)deps;
    (void)ndeps;
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!node || !g)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    struct gmem *m = gmem_at(p, NULL);
    CUresult rc = m ? add_node(g, N_FREE, m, NULL, node) : CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&mu);
    return rc;
}

EXPORT CUresult cuGraphAddMemsetNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                                     size_t ndeps, const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
    (void)deps;
    (void)ndeps;
    (void)ctx;
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!node || !g || !p || (p->elementSize != 1 && p->elementSize != 4) || p->height != 1)
        return CUDA_ERROR_INVALID_VALUE;
    struct simcu_op op = {.kind = SIMCU_OP_MEMSET,
                          .dst = p->dst,
                          .value = p->value,
                          .elsize = p->elementSize,
                          .n = p->width};
    pthread_mutex_lock(&mu);
    CUresult rc = add_node(g, N_MEMSET, NULL, &op, node);
    pthread_mutex_unlock(&mu);
    return rc;
}

/* Its nodes and, once no instantiation uses it, its memory's addresses
 * (an allocation still live stays until it is freed). Lock held. */
static void graph_gone(CUgraph g)
{
    if (!g->destroyed || g->execs)
        return;
    for (size_t i = nmems; i-- > 0;)
        if (mems[i]->owner == g) {
            if (mems[i]->live)
                mems[i]->orphan = true;
            else
                release(i);
        }
    for (unsigned i = 0; i < g->n; i++)
        free(g->nodes[i]);
    free(g->nodes);
    free(g);
}

EXPORT CUresult cuGraphDestroy(CUgraph g)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!g)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    g->destroyed = true;
    graph_gone(g);
    pthread_mutex_unlock(&mu);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *out, CUgraph g, unsigned long long flags)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!out || !g || (flags & ~1ULL & ~8ULL)) /* auto free on launch, use node priority */
        return CUDA_ERROR_INVALID_VALUE;
    CUgraphExec e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&mu);
    CUresult rc = g->has_mem && g->execs ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (rc == CUDA_SUCCESS) {
        g->execs++;
        *e = (struct CUgraphExec_st){g, flags};
        *out = e;
    }
    pthread_mutex_unlock(&mu);
    if (rc != CUDA_SUCCESS)
        free(e);
    return rc;
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec e)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!e)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    e->g->execs--;
    graph_gone(e->g);
    pthread_mutex_unlock(&mu);
    free(e);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphLaunch(CUgraphExec e, CUstream s)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!e)
        return CUDA_ERROR_INVALID_VALUE;
    simcu_gate();
    pthread_mutex_lock(&mu);
    CUresult rc = capture_of(s) ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
    for (unsigned i = 0; rc == CUDA_SUCCESS && i < e->g->n; i++) {
        struct CUgraphNode_st *n = e->g->nodes[i];
        switch (n->kind) {
        case N_ALLOC:
            if (n->mem->live && !(e->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH))
                rc = CUDA_ERROR_INVALID_VALUE; /* still allocated from the last launch */
            else if ((rc = back(n->mem)) == CUDA_SUCCESS)
                n->mem->live = true;
            break;
        case N_FREE:
            n->mem->live = false;
            break;
        default:
            rc = simcu_run_op(&n->op);
        }
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

EXPORT CUresult cuDeviceGraphMemTrim(CUdevice dev)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (simcu_gpu(dev) < 0)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nmems; i++)
        if (mems[i]->dev == dev && !mems[i]->live)
            unback(mems[i]);
    pthread_mutex_unlock(&mu);
    return CUDA_SUCCESS;
}

static uint64_t used_high[SIM_MAX_GPUS], reserved_high[SIM_MAX_GPUS];

EXPORT CUresult cuDeviceGetGraphMemAttribute(CUdevice dev, int attr, void *value)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (simcu_gpu(dev) < 0)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!value || attr < 0 || attr > CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    uint64_t used = 0, reserved = 0;
    for (size_t i = 0; i < nmems; i++)
        if (mems[i]->dev == dev) {
            used += mems[i]->live ? mems[i]->size : 0;
            reserved += mems[i]->fd >= 0 ? mems[i]->size : 0;
        }
    if (used > used_high[dev])
        used_high[dev] = used;
    if (reserved > reserved_high[dev])
        reserved_high[dev] = reserved;
    uint64_t v[] = {used, used_high[dev], reserved, reserved_high[dev]};
    memcpy(value, &v[attr], sizeof v[attr]);
    pthread_mutex_unlock(&mu);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceSetGraphMemAttribute(CUdevice dev, int attr, void *value)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (simcu_gpu(dev) < 0)
        return CUDA_ERROR_INVALID_DEVICE;
    uint64_t v;
    if (!value ||
        (attr != CU_GRAPH_MEM_ATTR_USED_MEM_HIGH && attr != CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH))
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(&v, value, sizeof v);
    if (v) /* only a reset */
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    if (attr == CU_GRAPH_MEM_ATTR_USED_MEM_HIGH)
        used_high[dev] = 0;
    else
        reserved_high[dev] = 0;
    pthread_mutex_unlock(&mu);
    return CUDA_SUCCESS;
}
