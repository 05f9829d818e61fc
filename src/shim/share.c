/* share: CUDA IPC under fast swap (see share.h; the wire is
 * ipc/sharewire.h).
 *
 * Exporter: the first handle it hands out binds its socket (an abstract
 * name with a random part, which the handle carries) and starts the share
 * thread. Each importer connects once per handle it opens and keeps the
 * connection while it maps the memory: the exporter counts it as long as
 * the connection lives. Only the same user (or root) is answered, and only
 * with the handle's random token.
 *
 * Importer: cuIpcOpenMemHandle connects, asks, maps what it gets at an
 * address of its own, and gives the connection to the share thread, which
 * answers the exporter's DETACH (close the gate, wait for this process's
 * work, unmap, keep the address range) and BACK (map the new memory there,
 * open the gate).
 *
 * One lock (mu) guards the tables; the swap table's lock, when both are
 * needed, is taken first, and the share thread only ever tries for it
 * (an export asked for while a swap holds it is "away": the importer asks
 * again). Entries are removed by the share thread alone. */
#include "shim/share.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/units.h"
#include "host/clock.h"
#include "ipc/sharewire.h"
#include "shim/driver.h"
#include "shim/gate.h"
#include "shim/shim.h"

#define MAX_EXPORTS 256
#define MAX_PEERS   256
#define MAX_IMPORTS 256
#define ASK_MS      5000 /* an importer waits this long for memory that is away */
#define HOLD_MS     10000

struct export
{
    uint64_t id, size;
    uint8_t token[SHAREWIRE_TOKEN_LEN];
    bool live; /* false once freed: its importers keep what they mapped */
};

struct peer { /* an importer's connection */
    int fd;
    pid_t pid;
    uint64_t id; /* the export it opened; 0 before */
    bool holdable, attached, away, pending, busy;
};

struct import { /* another process's memory, mapped here */
    int fd;     /* the connection to its exporter; -1 once it is gone */
    pid_t pid;
    uint64_t id, size;
    CUdeviceptr va;
    CUmemGenericAllocationHandle h; /* 0 while unmapped */
    int dev;                        /* the device given access here */
    bool held, closing;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct export exports[MAX_EXPORTS];
static unsigned nexports;
static struct peer peers[MAX_PEERS];
static unsigned npeers;
static struct import imports[MAX_IMPORTS];
static unsigned nimports;
static int listen_fd = -1, wake_fd = -1;
static uint64_t nonce;
static bool running;

static void wake(void)
{
    uint64_t one = 1;
    if (wake_fd >= 0 && write(wake_fd, &one, sizeof one) < 0)
        return; /* the counter is full: the thread wakes anyway */
}

static void random_bytes(void *p, size_t n)
{
    if (getrandom(p, n, 0) == (ssize_t)n)
        return;
    /* no entropy yet: a process this early has no handle worth guessing */
    uint64_t v = clock_mono_ms() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
    for (size_t i = 0; i < n; i++, v = v * 6364136223846793005ULL + 1)
        ((unsigned char *)p)[i] = (unsigned char)(v >> 56);
}

/* Sends m, with a descriptor when fd >= 0. */
static int send_msg(int sock, const struct sharewire_msg *m, int fd)
{
    unsigned char b[SHAREWIRE_MSG_LEN];
    sharewire_msg_pack(m, b);
    union {
        char c[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {b, sizeof b};
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(&ctl, 0, sizeof ctl);
        h.msg_control = ctl.c;
        h.msg_controllen = sizeof ctl.c;
        struct cmsghdr *c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    ssize_t w;
    while ((w = sendmsg(sock, &h, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    return w == (ssize_t)sizeof b ? 0 : -1;
}

/* One message, and the descriptor that came with it in *fd (-1: none; any
 * further one is closed). 0, or -1 on a broken, closed or foreign peer. */
static int recv_msg(int sock, struct sharewire_msg *m, int *fd)
{
    unsigned char b[SHAREWIRE_MSG_LEN + 1];
    union {
        char c[CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {b, sizeof b};
    struct msghdr h = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.c, .msg_controllen = sizeof ctl.c};
    ssize_t r;
    while ((r = recvmsg(sock, &h, MSG_CMSG_CLOEXEC | MSG_DONTWAIT)) < 0 && errno == EINTR)
        ;
    *fd = -1;
    for (struct cmsghdr *c = r >= 0 ? CMSG_FIRSTHDR(&h) : NULL; c; c = CMSG_NXTHDR(&h, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
            int x;
            memcpy(&x, CMSG_DATA(c) + i * sizeof(int), sizeof x);
            if (*fd < 0)
                *fd = x;
            else
                close(x);
        }
    }
    if (r <= 0 || (h.msg_flags & MSG_TRUNC) || sharewire_msg_parse(b, (size_t)r, m) < 0) {
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
        return -1;
    }
    return 0;
}

static bool same_user(int sock, pid_t *pid)
{
    struct ucred c;
    socklen_t n = sizeof c;
    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &c, &n) != 0)
        return false;
    if (pid)
        *pid = c.pid;
    return c.uid == getuid() || c.uid == 0;
}

/* ---- the importer's side ---- */

/* Every context of the process has done its work. */
static CUresult finish_contexts(void)
{
    CUresult rc = CUDA_SUCCESS;
    CUcontext list[SHIM_MAX_CONTEXTS];
    unsigned n;
    bool primary[SHIM_MAX_DEVICES];
    pthread_mutex_lock(&shim.ctx_mu);
    n = shim.nctx;
    memcpy(list, shim.ctx, n * sizeof list[0]);
    memcpy(primary, shim.primary_used, sizeof primary);
    pthread_mutex_unlock(&shim.ctx_mu);
    for (int dev = 0; rc == CUDA_SUCCESS && dev < SHIM_MAX_DEVICES; dev++) {
        CUcontext c;
        if (!primary[dev] || real_cuDevicePrimaryCtxRetain(&c, dev) != CUDA_SUCCESS)
            continue;
        if ((rc = real_cuCtxSetCurrent(c)) == CUDA_SUCCESS)
            rc = real_cuCtxSynchronize();
        real_cuDevicePrimaryCtxRelease_v2(dev);
    }
    for (unsigned i = 0; rc == CUDA_SUCCESS && i < n; i++)
        if ((rc = real_cuCtxSetCurrent(list[i])) == CUDA_SUCCESS)
            rc = real_cuCtxSynchronize();
    real_cuCtxSetCurrent(NULL);
    return rc;
}

/* Maps descriptor fd (closed here) at im's address, reachable from its
 * device. */
static CUresult map_import(struct import *im, int fd)
{
    CUmemGenericAllocationHandle h = 0;
    CUresult rc = real_cuMemImportFromShareableHandle(&h, (void *)(intptr_t)fd,
                                                      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    close(fd);
    if (rc != CUDA_SUCCESS)
        return rc;
    CUmemAccessDesc d = {{CU_MEM_LOCATION_TYPE_DEVICE, im->dev}, 3};
    if ((rc = real_cuMemMap(im->va, im->size, 0, h, 0)) != CUDA_SUCCESS) {
        real_cuMemRelease(h);
        return rc;
    }
    if ((rc = real_cuMemSetAccess(im->va, im->size, &d, 1)) != CUDA_SUCCESS) {
        real_cuMemUnmap(im->va, im->size);
        real_cuMemRelease(h);
        return rc;
    }
    im->h = h;
    return CUDA_SUCCESS;
}

/* The exporter of import i leaves: this process lets go, its threads held
 * until the memory is back. Lock held on entry and exit, dropped
 * meanwhile (only this thread removes entries). */
static void on_detach(unsigned i, const struct sharewire_msg *m)
{
    struct sharewire_msg a = {.kind = SHAREWIRE_DETACHED, .id = m->id};
    unsigned busy;
    int sock = imports[i].fd;
    if (imports[i].held || !imports[i].h) { /* let go already */
        send_msg(sock, &a, -1);
        return;
    }
    pthread_mutex_unlock(&mu);
    int ok = gate_close(HOLD_MS, &busy) == 0;
    if (ok && finish_contexts() != CUDA_SUCCESS) {
        gate_open();
        ok = 0;
    }
    pthread_mutex_lock(&mu);
    if (ok) {
        struct import *im = &imports[i];
        real_cuMemUnmap(im->va, im->size);
        real_cuMemRelease(im->h);
        im->h = 0;
        im->held = true;
    } else {
        a.kind = SHAREWIRE_BUSY;
    }
    send_msg(sock, &a, -1);
}

static void on_back(struct import *im, int fd)
{
    if (!im->held || fd < 0) {
        if (fd >= 0)
            close(fd);
        return;
    }
    CUresult rc = map_import(im, fd);
    if (rc != CUDA_SUCCESS)
        fprintf(stderr,
                "libvramcap: memory of pid %d shared with this process came back but could "
                "not be mapped (error %d): this process's use of it will fail\n",
                (int)im->pid, rc);
    im->held = false;
    gate_open();
}

/* The exporter is gone: memory it had taken away never comes back. */
static void exporter_gone(struct import *im)
{
    close(im->fd);
    im->fd = -1;
    if (im->held) {
        fprintf(stderr,
                "libvramcap: pid %d ended while its memory shared with this process was "
                "away: this process's use of it will fail\n",
                (int)im->pid);
        im->held = false;
        gate_open();
    }
}

static void on_import(unsigned i)
{
    struct sharewire_msg m;
    int fd;
    if (recv_msg(imports[i].fd, &m, &fd) < 0) {
        exporter_gone(&imports[i]);
        return;
    }
    if (m.id != imports[i].id) {
        if (fd >= 0)
            close(fd);
    } else if (m.kind == SHAREWIRE_DETACH) {
        if (fd >= 0)
            close(fd);
        on_detach(i, &m);
    } else if (m.kind == SHAREWIRE_BACK) {
        on_back(&imports[i], fd);
    } else if (fd >= 0) {
        close(fd);
    }
}

/* ---- the exporter's side ---- */

static struct export *export_of(uint64_t id)
{
    for (unsigned i = 0; i < nexports; i++)
        if (exports[i].id == id && exports[i].live)
            return &exports[i];
    return NULL;
}

static bool token_ok(const uint8_t *a, const uint8_t *b)
{
    unsigned char d = 0;
    for (int i = 0; i < SHAREWIRE_TOKEN_LEN; i++)
        d |= a[i] ^ b[i];
    return d == 0;
}

/* A descriptor of the allocation's memory as it is now, or -1 (swapped
 * out). Swap table locked by the caller. */
static int export_fd(uint64_t id)
{
    struct swaptable_entry *p = swaptable_by_id(&shim.swaptable, id);
    int fd = -1;
    if (!p || !p->real ||
        real_cuMemExportToShareableHandle(&fd, p->real, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                          0) != CUDA_SUCCESS)
        return -1;
    return fd;
}

static void on_open(struct peer *p, const struct sharewire_msg *m)
{
    struct export *e = export_of(m->id);
    struct sharewire_msg a = {.kind = SHAREWIRE_NOPE, .id = m->id};
    if (!e || !token_ok(e->token, m->token) || p->id) {
        send_msg(p->fd, &a, -1);
        return;
    }
    a.kind = SHAREWIRE_AWAY; /* a swap under way holds the table: ask again */
    int fd = -1;
    if (pthread_mutex_trylock(&shim.swaptable.mu) == 0) {
        fd = export_fd(m->id);
        pthread_mutex_unlock(&shim.swaptable.mu);
    }
    if (fd >= 0) {
        a.kind = SHAREWIRE_OK;
        a.size = e->size;
        p->id = m->id;
        p->attached = true;
        p->holdable = (m->flags & SHAREWIRE_HOLDABLE) != 0;
    }
    send_msg(p->fd, &a, fd);
    if (fd >= 0)
        close(fd);
}

static void on_peer(struct peer *p)
{
    struct sharewire_msg m;
    int fd;
    if (recv_msg(p->fd, &m, &fd) < 0) {
        close(p->fd);
        p->fd = -1; /* gone: it holds nothing of ours any more */
        p->pending = p->attached = false;
        pthread_cond_broadcast(&cv);
        return;
    }
    if (fd >= 0)
        close(fd);
    if (m.kind == SHAREWIRE_OPEN) {
        on_open(p, &m);
    } else if (m.kind == SHAREWIRE_DETACHED && p->pending) {
        p->pending = p->attached = false;
        p->away = true;
        pthread_cond_broadcast(&cv);
    } else if (m.kind == SHAREWIRE_BUSY && p->pending) {
        p->pending = false;
        p->busy = true;
        pthread_cond_broadcast(&cv);
    }
}

/* ---- the share thread ---- */

/* Entries whose connection is closed go (this thread alone removes). */
static void sweep(void)
{
    for (unsigned i = npeers; i-- > 0;)
        if (peers[i].fd < 0)
            peers[i] = peers[--npeers];
    for (unsigned i = nimports; i-- > 0;)
        if (imports[i].closing) {
            if (imports[i].fd >= 0)
                close(imports[i].fd);
            imports[i] = imports[--nimports];
        }
}

static void accept_peer(void)
{
    int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    pid_t pid = 0;
    if (fd < 0)
        return;
    if (!same_user(fd, &pid) || npeers == MAX_PEERS) {
        close(fd);
        return;
    }
    peers[npeers++] = (struct peer){.fd = fd, .pid = pid};
}

static void *loop(void *arg)
{
    (void)arg;
    struct pollfd p[2 + MAX_PEERS + MAX_IMPORTS];
    int who[2 + MAX_PEERS + MAX_IMPORTS]; /* -1 wake, -2 listener, peer i, MAX_PEERS + import i */
    pthread_mutex_lock(&mu);
    for (;;) {
        sweep();
        unsigned n = 0;
        p[n] = (struct pollfd){wake_fd, POLLIN, 0};
        who[n++] = -1;
        if (listen_fd >= 0) {
            p[n] = (struct pollfd){listen_fd, POLLIN, 0};
            who[n++] = -2;
        }
        for (unsigned i = 0; i < npeers; i++) {
            p[n] = (struct pollfd){peers[i].fd, POLLIN, 0};
            who[n++] = (int)i;
        }
        for (unsigned i = 0; i < nimports; i++)
            if (imports[i].fd >= 0 && !imports[i].closing) {
                p[n] = (struct pollfd){imports[i].fd, POLLIN, 0};
                who[n++] = MAX_PEERS + (int)i;
            }
        pthread_mutex_unlock(&mu);
        int r = poll(p, n, -1);
        pthread_mutex_lock(&mu);
        if (r < 0)
            continue;
        for (unsigned k = 0; k < n; k++) {
            if (!p[k].revents)
                continue;
            if (who[k] == -1) {
                uint64_t v;
                if (read(wake_fd, &v, sizeof v) < 0)
                    continue;
            } else if (who[k] == -2) {
                accept_peer();
            } else if (who[k] < MAX_PEERS) {
                if ((unsigned)who[k] < npeers && peers[who[k]].fd == p[k].fd)
                    on_peer(&peers[who[k]]);
            } else {
                unsigned i = (unsigned)(who[k] - MAX_PEERS);
                if (i < nimports && imports[i].fd == p[k].fd && !imports[i].closing)
                    on_import(i);
            }
        }
    }
    return NULL;
}

/* The share thread (and, to export, the socket), once. Lock held. */
static int start(bool listen_too)
{
    if (listen_too && listen_fd < 0) {
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        struct sockaddr_un a;
        for (int i = 0; fd >= 0 && i < 8 && listen_fd < 0; i++) {
            random_bytes(&nonce, sizeof nonce);
            socklen_t alen = sharewire_address(getpid(), nonce, &a);
            if (bind(fd, (struct sockaddr *)&a, alen) == 0 && listen(fd, 16) == 0)
                listen_fd = fd;
        }
        if (listen_fd < 0) {
            if (fd >= 0)
                close(fd);
            return -1;
        }
        wake();
    }
    if (running)
        return 0;
    if (wake_fd < 0 && (wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
        return -1;
    /* the thread takes no signal meant for the application */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    running = pthread_create(&t, &at, loop, NULL) == 0;
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return running ? 0 : -1;
}

/* ---- what the entry points ask (mem.c) ---- */

int share_handle(CUipcMemHandle *h, CUdeviceptr ptr, CUresult *rc)
{
    pthread_mutex_lock(&shim.swaptable.mu);
    struct swaptable_entry *p = swaptable_by_va(&shim.swaptable, ptr);
    struct sharewire_handle w = {.pid = getpid()};
    bool ours = p && p->own && !p->chunk && p->va == ptr;
    bool exportable =
        ours && (p->prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    if (ours) {
        w.id = p->id;
        w.size = p->size;
        w.dev = (uint32_t)p->prop.location.id;
    }
    pthread_mutex_unlock(&shim.swaptable.mu);
    if (!ours) /* the driver's own memory, or no allocation's base: its answer */
        return 0;
    *rc = CUDA_ERROR_NOT_SUPPORTED;
    if (!exportable)
        return 1;
    pthread_mutex_lock(&mu);
    *rc = start(true) == 0 ? CUDA_SUCCESS : CUDA_ERROR_OPERATING_SYSTEM;
    struct export *e = export_of(w.id);
    if (*rc == CUDA_SUCCESS && !e) {
        if (nexports == MAX_EXPORTS) {
            *rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            e = &exports[nexports++];
            *e = (struct export){.id = w.id, .size = w.size, .live = true};
            random_bytes(e->token, sizeof e->token);
        }
    }
    if (*rc == CUDA_SUCCESS) {
        w.nonce = nonce;
        memcpy(w.token, e->token, sizeof w.token);
        memset(h, 0, sizeof *h);
        sharewire_handle_pack(&w, (unsigned char *)h->reserved);
    }
    pthread_mutex_unlock(&mu);
    return 1;
}

/* Connects to the exporter and gets a descriptor of its memory. */
static CUresult ask(const struct sharewire_handle *w, int *sock, int *fd)
{
    struct sockaddr_un a;
    socklen_t alen = sharewire_address(w->pid, w->nonce, &a);
    pid_t who = 0;
    *sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (*sock < 0 || connect(*sock, (struct sockaddr *)&a, alen) != 0 || !same_user(*sock, &who) ||
        who != w->pid)
        return CUDA_ERROR_INVALID_HANDLE; /* its process is gone */
    struct sharewire_msg q = {.kind = SHAREWIRE_OPEN, .id = w->id}, m;
    memcpy(q.token, w->token, sizeof q.token);
    if (shim.swap && gate_supported())
        q.flags = SHAREWIRE_HOLDABLE;
    for (uint64_t until = clock_mono_ms() + ASK_MS;;) {
        if (send_msg(*sock, &q, -1) < 0)
            return CUDA_ERROR_INVALID_HANDLE;
        struct pollfd p = {*sock, POLLIN, 0};
        if (poll(&p, 1, ASK_MS) != 1 || recv_msg(*sock, &m, fd) < 0)
            return CUDA_ERROR_INVALID_HANDLE;
        if (m.kind == SHAREWIRE_OK && *fd >= 0 && m.id == w->id && m.size == w->size)
            return CUDA_SUCCESS;
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
        if (m.kind != SHAREWIRE_AWAY || clock_mono_ms() >= until)
            return m.kind == SHAREWIRE_AWAY ? CUDA_ERROR_NOT_READY : CUDA_ERROR_INVALID_VALUE;
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
}

int share_open(CUdeviceptr *dptr, const CUipcMemHandle *h, unsigned flags, uint64_t *size,
               CUresult *rc)
{
    struct sharewire_handle w;
    if (!h || sharewire_handle_parse((const unsigned char *)h->reserved, &w) < 0)
        return 0;
    (void)flags; /* access for this process's device, whichever holds the memory */
    int dev = shim_device_now(), sock = -1, fd = -1;
    if (!dptr)
        *rc = CUDA_ERROR_INVALID_VALUE;
    else if (dev < 0)
        *rc = CUDA_ERROR_INVALID_CONTEXT;
    else if (w.pid == getpid()) /* the exporter itself cannot open it */
        *rc = CUDA_ERROR_INVALID_CONTEXT;
    else
        *rc = ask(&w, &sock, &fd);
    struct import im = {.fd = sock, .pid = w.pid, .id = w.id, .size = w.size, .dev = dev};
    if (*rc == CUDA_SUCCESS && (*rc = real_cuMemAddressReserve(&im.va, w.size, 0, 0, 0)) != 0)
        close(fd);
    pthread_mutex_lock(&mu);
    if (*rc == CUDA_SUCCESS && (*rc = map_import(&im, fd)) != CUDA_SUCCESS)
        real_cuMemAddressFree(im.va, im.size);
    if (*rc == CUDA_SUCCESS && (nimports == MAX_IMPORTS || start(false) < 0)) {
        real_cuMemUnmap(im.va, im.size);
        real_cuMemRelease(im.h);
        real_cuMemAddressFree(im.va, im.size);
        *rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (*rc == CUDA_SUCCESS) {
        imports[nimports++] = im;
        *dptr = im.va;
        *size = im.size;
        wake();
    } else if (sock >= 0) {
        close(sock);
    }
    pthread_mutex_unlock(&mu);
    return 1;
}

int share_close(CUdeviceptr p)
{
    pthread_mutex_lock(&mu);
    struct import *im = NULL;
    for (unsigned i = 0; i < nimports && !im; i++)
        if (imports[i].va == p && !imports[i].closing)
            im = &imports[i];
    if (im) {
        if (im->h) {
            real_cuMemUnmap(im->va, im->size);
            real_cuMemRelease(im->h);
        }
        real_cuMemAddressFree(im->va, im->size);
        im->closing = true; /* the share thread closes the connection */
        if (im->fd >= 0)
            shutdown(im->fd, SHUT_RDWR);
        wake();
    }
    pthread_mutex_unlock(&mu);
    return im != NULL;
}

const char *share_blocker(char *why, size_t len)
{
    const char *r = NULL;
    pthread_mutex_lock(&mu);
    for (unsigned i = 0; i < npeers && !r; i++) {
        struct export *e = peers[i].attached ? export_of(peers[i].id) : NULL;
        if (e && !peers[i].holdable) {
            char sz[32];
            snprintf(why, len,
                     "pid %d maps %s of its memory (CUDA IPC) and does not run with fast swap "
                     "on, so it cannot wait while that memory is away",
                     (int)peers[i].pid, units_fmt_size(e->size, sz, sizeof sz));
            r = why;
        }
    }
    pthread_mutex_unlock(&mu);
    return r;
}

/* Sends the memory again to each importer that let go. Both locks held. */
static void back_locked(void)
{
    for (unsigned i = 0; i < npeers; i++) {
        struct peer *p = &peers[i];
        struct export *e = p->away ? export_of(p->id) : NULL;
        int fd = e ? export_fd(p->id) : -1;
        if (fd < 0)
            continue;
        struct sharewire_msg m = {.kind = SHAREWIRE_BACK, .id = p->id, .size = e->size};
        if (send_msg(p->fd, &m, fd) == 0) {
            p->away = false;
            p->attached = true;
        }
        close(fd);
    }
}

int share_evict(unsigned timeout_ms, char *err, size_t len)
{
    pthread_mutex_lock(&mu);
    for (unsigned i = 0; i < npeers; i++) {
        struct peer *p = &peers[i];
        p->busy = p->pending = false;
        if (!p->attached || !export_of(p->id))
            continue;
        struct sharewire_msg m = {.kind = SHAREWIRE_DETACH, .id = p->id};
        if (send_msg(p->fd, &m, -1) == 0)
            p->pending = true;
    }
    uint64_t until = clock_mono_ms() + timeout_ms;
    pid_t late = 0;
    for (;;) {
        bool waiting = false, busy = false;
        late = 0;
        for (unsigned i = 0; i < npeers; i++)
            if (peers[i].fd >= 0 && (peers[i].pending || peers[i].busy)) {
                waiting |= peers[i].pending;
                busy |= peers[i].busy;
                late = peers[i].pid;
            }
        if (!waiting || busy || clock_mono_ms() >= until)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&cv, &mu, &ts);
    }
    if (late) {
        snprintf(err, len,
                 "pid %d, which maps this process's memory (CUDA IPC), could not be held "
                 "(its driver calls did not return); not suspended",
                 (int)late);
        back_locked(); /* those that let go have it again */
    }
    pthread_mutex_unlock(&mu);
    return late ? -1 : 0;
}

void share_back(void)
{
    pthread_mutex_lock(&mu);
    back_locked();
    pthread_mutex_unlock(&mu);
}

void share_forget(uint64_t id)
{
    pthread_mutex_lock(&mu);
    for (unsigned i = 0; i < nexports; i++)
        if (exports[i].id == id)
            exports[i].live = false;
    pthread_mutex_unlock(&mu);
}

void share_after_fork(void)
{
    /* the child has no GPU memory and no share thread; the parent's
     * connections and socket are not its own */
    pthread_mutex_init(&mu, NULL);
    pthread_cond_init(&cv, NULL);
    for (unsigned i = 0; i < npeers; i++)
        close(peers[i].fd);
    for (unsigned i = 0; i < nimports; i++)
        if (imports[i].fd >= 0)
            close(imports[i].fd);
    if (listen_fd >= 0)
        close(listen_fd);
    if (wake_fd >= 0)
        close(wake_fd);
    listen_fd = wake_fd = -1;
    nexports = npeers = nimports = 0;
    running = false;
}
