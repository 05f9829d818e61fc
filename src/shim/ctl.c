/* ctl: how `vram suspend`, `vram resume` and the daemon reach a process's
 * fast swap. Once the process has a CUDA context (and VRAM_SWAP=1), a
 * thread listens on the abstract Unix socket "vram-swap-PID" (no file to
 * clean up when the process dies) and answers one line per connection:
 *   info | suspend [TIMEOUT_MS [SPILL]] | resume [FLOOR] | prepare | drop | spill [SPILL]
 *   -> "ok state=... bytes=... [times]" or "error MESSAGE"
 * (under the daemon, `prepare` and `suspend` bring chunks of host memory,
 * and `suspend` and `spill` may bring a spill file: ipc/swapline.h)
 * Only the daemon that started the process, or root, is answered (or,
 * outside vram serve, its own user: trust.h); anyone else is told why and
 * nothing it sent is read. The client checks in turn that the socket
 * belongs to the pid it meant. A name another process took first is left
 * to it: this one listens on a name of its own (ipc/swapline.h), which the
 * client finds among this process's sockets. The thread also readies the
 * host pool ahead of the first swap (VRAM_SWAP_POOL=ready, or eager). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "host/clock.h"
#include "ipc/swapline.h"
#include "shim/ctl.h"
#include "shim/gate.h"
#include "shim/hostmem.h"
#include "shim/shim.h"
#include "shim/swap.h"
#include "shim/trust.h"

static atomic_bool started;
static int listen_fd = -1;

static const char *policy_name(void)
{
    static const char *names[] = {"keep", "none", "eager", "ready"};
    return names[hostmem_policy()];
}

/* The chunks of host memory that came with a request: kept for a suspend
 * or a prepare under the daemon, closed otherwise. 0, or -1 with err. */
static int take_chunks(const struct swapline_req *q, const int *fds, unsigned n, char *err,
                       size_t len)
{
    bool keep = hostmem_daemon() && !swap_suspended() &&
                (q->verb == SWAPLINE_SUSPEND || q->verb == SWAPLINE_PREPARE);
    /* the spill file comes last (a suspend's) or alone (a spill's) */
    bool file = hostmem_daemon() && q->spill && n &&
                ((q->verb == SWAPLINE_SUSPEND && !swap_suspended()) ||
                 (q->verb == SWAPLINE_SPILL && swap_suspended()));
    int rc = 0;
    for (unsigned i = 0; i < n; i++)
        if (file && i == n - 1)
            rc |= hostmem_set_file(fds[i], q->spill, err, len);
        else if (!keep)
            close(fds[i]);
        else if (hostmem_add_chunk(fds[i], err, len) < 0)
            rc = -1;
    return rc;
}

/* Answers one request; true when it was a resume that succeeded (*keep:
 * it was asked to keep the daemon's chunks). */
static bool answer(int fd, const char *req, const int *fds, unsigned nfds, bool *keep)
{
    char out[512], err[256] = "";
    struct swap_stats st;
    memset(&st, 0, sizeof st);
    int rc = 0;
    uint64_t hostpool_ms = 0;
    struct swapline_req q;
    bool parsed = swapline_parse_request(req, &q) == 0;
    if (!parsed) {
        for (unsigned i = 0; i < nfds; i++)
            close(fds[i]);
        snprintf(err, sizeof err,
                 "unknown request '%.40s' (info, suspend [MS [SPILL]], resume [FLOOR], prepare, "
                 "drop, spill [SPILL [BYTES]])",
                 req);
        rc = -1;
    } else if (take_chunks(&q, fds, nfds, err, sizeof err) < 0) {
        rc = -1;
    } else if (q.verb == SWAPLINE_SUSPEND) {
        rc = swap_suspend(q.timeout_ms ? q.timeout_ms : 10000, &st, err, sizeof err);
    } else if (q.verb == SWAPLINE_RESUME) {
        rc = swap_resume(q.floor, &st, err, sizeof err);
    } else if (q.verb == SWAPLINE_PREPARE) {
        rc = swap_prepare(&hostpool_ms, err, sizeof err);
        st.hostpool_ms = hostpool_ms;
    } else if (q.verb == SWAPLINE_DROP) {
        swap_drop();
    } else if (q.verb == SWAPLINE_SPILL) {
        rc = swap_spill(q.spill_bytes, &st.disk_ms, err, sizeof err);
        if (rc < 0 && !hostmem_file_bytes()) /* a file given for this, holding nothing */
            hostmem_file_close();
    }
    /* a suspend or a prepare that failed keeps none of what it was given:
     * the daemon takes it back */
    if (rc < 0 && parsed && (q.verb == SWAPLINE_SUSPEND || q.verb == SWAPLINE_PREPARE))
        swap_drop();
    if (rc < 0) {
        snprintf(out, sizeof out, "error %s\n", err);
    } else {
        /* the line's names (ipc/swapline.h): its pool is the host pool */
        struct swapline_info in = {.pool = hostmem_bytes(),
                                   .held = hostmem_held(),
                                   .gate_ms = st.gate_ms,
                                   .sync_ms = st.sync_ms,
                                   .pool_ms = st.hostpool_ms,
                                   .copy_ms = st.copy_ms,
                                   .disk = hostmem_file_bytes(),
                                   .disk_ms = st.disk_ms};
        if (swap_check(&in.bytes, &in.allocations, in.why, sizeof in.why) >= 0)
            in.why[0] = '\0';
        if (st.allocations) { /* what moved, not what is there once the gate opened */
            in.bytes = st.bytes;
            in.allocations = st.allocations;
        }
        snprintf(in.state, sizeof in.state, "%s", swap_suspended() ? "suspended" : "running");
        snprintf(in.policy, sizeof in.policy, "%s", policy_name());
        if (swapline_format(&in, out, sizeof out) < 0)
            snprintf(out, sizeof out, "error the answer does not fit its line\n");
    }
    size_t len = strlen(out), off = 0;
    while (off < len) {
        ssize_t w = send(fd, out + off, len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    *keep = parsed && q.keep;
    return parsed && rc == 0 && q.verb == SWAPLINE_RESUME;
}

/* A peer trust.c refuses: told why, its request (and any descriptor
 * with it) never read. */
static void refuse(int fd, const char *why)
{
    char out[400];
    int n = snprintf(out, sizeof out, "error refused: %s\n", why);
    if (n > 0 && send(fd, out, (size_t)n < sizeof out ? (size_t)n : sizeof out - 1,
                      MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        /* it left: nothing to tell */
    }
}

/* recv, keeping the descriptors passed along (up to SWAPLINE_MAX_CHUNKS
 * in all, in fds[*n]) and closing any more. */
static ssize_t recv_passed(int fd, char *buf, size_t len, int *fds, unsigned *n)
{
    union {
        char b[CMSG_SPACE(SWAPLINE_MAX_CHUNKS * sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {buf, len};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof ctl.b};
    ssize_t r = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
    for (struct cmsghdr *c = r >= 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int x;
            memcpy(&x, CMSG_DATA(c) + i * sizeof(int), sizeof x);
            if (*n < SWAPLINE_MAX_CHUNKS)
                fds[(*n)++] = x;
            else
                close(x);
        }
    }
    return r;
}

static void serve_one(int fd)
{
    char req[512];
    size_t n = 0;
    int fds[SWAPLINE_MAX_CHUNKS];
    unsigned nfds = 0;
    struct pollfd p = {fd, POLLIN, 0};
    while (n < sizeof req - 1 && poll(&p, 1, 5000) == 1) {
        ssize_t r = recv_passed(fd, req + n, sizeof req - 1 - n, fds, &nfds);
        if (r <= 0)
            break;
        n += (size_t)r;
        if (memchr(req, '\n', n))
            break;
    }
    req[n] = 0;
    char *nl = strchr(req, '\n');
    if (!nl) {
        for (unsigned i = 0; i < nfds; i++)
            close(fds[i]);
        return;
    }
    *nl = 0;
    bool keep = false;
    if (answer(fd, req, fds, nfds, &keep)) {
        /* the resume is answered: what held the bytes goes back now, off
         * its path (unpinning 16 GiB takes ~0.3 s) */
        shutdown(fd, SHUT_RDWR);
        swap_after_resume(keep);
    }
}

/* How often the control thread looks, readying ahead ("ready"); and how
 * much it pins a step: one step holds up the process's next driver call
 * by its pinning (~0.1 s a GiB), so only while it is idle. */
#define READY_POLL_MS 200
#define READY_STEP    (1ULL << 30)

/* Alone, the host pool made ahead of the first suspend: "eager" all at
 * once once the allocations have settled, "ready" a step at a time while
 * the process also made no driver call since the last look. */
static void ahead_tick(uint64_t *last, unsigned long *calls)
{
    /* a call in flight (a long copy) is work too */
    static bool failed;
    uint64_t bytes, ms;
    unsigned allocs;
    char why[200], err[200];
    static unsigned quiet; /* looks in a row with no driver call */
    unsigned long c = gate_entries();
    quiet = c == *calls && !gate_inflight() ? quiet + 1 : 0;
    bool idle = quiet >= 2; /* a process between two calls is not idle */
    *calls = c;
    if (failed || swap_suspended())
        return;
    if (hostmem_policy() == HOSTMEM_READY) {
        if (idle && swap_ready_step(READY_STEP, &ms, err, sizeof err) < 0) {
            fprintf(stderr, "libvramcap: readying host memory for a suspend: %s\n", err);
            failed = true; /* said once; the suspend grows what is missing */
        }
        return;
    }
    swap_check(&bytes, &allocs, why, sizeof why);
    bool grow = bytes > hostmem_bytes();
    if (bytes == *last && grow) {
        if (swap_prepare(&ms, err, sizeof err) < 0) {
            fprintf(stderr, "libvramcap: preparing the host pool: %s\n", err);
            failed = true; /* said once; the suspend will try again */
        }
    }
    *last = bytes;
}

static void *loop(void *arg)
{
    (void)arg;
    uint64_t last = 0, next = 0;
    unsigned long calls = 0;
    for (;;) {
        struct pollfd p = {listen_fd, POLLIN, 0};
        /* alone, the host pool is made ahead; under the daemon it prepares.
         * Looks come on time whatever the requests (a client asking
         * `info` ten times a second must not starve the readying) */
        enum hostmem_policy pp = hostmem_policy();
        bool ahead = (pp == HOSTMEM_EAGER || pp == HOSTMEM_READY) && !hostmem_daemon();
        uint64_t now = clock_mono_ms(), every = pp == HOSTMEM_READY ? READY_POLL_MS : 2000;
        if (ahead && now >= next) {
            ahead_tick(&last, &calls);
            next = now + every;
        }
        int r = poll(&p, 1, !ahead ? -1 : (int)(next > now ? next - now : 0));
        if (r == 0)
            continue;
        if (r < 0 && errno == EINTR)
            continue;
        int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        char why[300];
        if (trust_peer(fd, why, sizeof why))
            serve_one(fd);
        else
            refuse(fd, why);
        close(fd);
    }
    return NULL;
}

/* Who holds the name a: "pid N, uid U", for the warning. */
static void holder(const struct sockaddr_un *a, socklen_t alen, char *out, size_t len)
{
    snprintf(out, len, "another process");
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct ucred c;
    socklen_t n = sizeof c;
    if (fd >= 0 && connect(fd, (const struct sockaddr *)a, alen) == 0 &&
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &n) == 0)
        snprintf(out, len, "pid %d (uid %u)", (int)c.pid, (unsigned)c.uid);
    if (fd >= 0)
        close(fd);
}

static uint64_t nonce(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        v ^= (uint64_t)t.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)t.tv_sec;
    }
    return v;
}

/* The name is abstract, so anyone may bind it first, for a pid yet to
 * come: then a name of our own with a random part, which the client finds
 * among the sockets this process holds. A squatter delays nobody. */
static int bind_ctl(void)
{
    struct sockaddr_un a;
    socklen_t alen = swapline_address(getpid(), &a);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)&a, alen) == 0)
        return fd;
    if (errno != EADDRINUSE) {
        close(fd);
        return -1;
    }
    char who[64], name[sizeof a.sun_path];
    holder(&a, alen, who, sizeof who);
    snprintf(name, sizeof name, "%s", a.sun_path + 1);
    for (int i = 0; i < 8; i++) {
        alen = swapline_address_alt(getpid(), nonce(), &a);
        if (bind(fd, (struct sockaddr *)&a, alen) == 0) {
            fprintf(stderr,
                    "libvramcap: %s is taken by %s, not this process: fast swap listens on "
                    "%s instead (vram finds it)\n",
                    name, who, a.sun_path + 1);
            return fd;
        }
    }
    close(fd);
    errno = EADDRINUSE;
    return -1;
}

void ctl_start(void)
{
    if (!shim.swap || atomic_exchange(&started, true))
        return;
    int fd = bind_ctl();
    if (fd < 0 || listen(fd, 8) < 0) {
        fprintf(stderr, "libvramcap: no fast swap: cannot listen on " SWAPLINE_NAME "%d (%s)\n",
                (int)getpid(), strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    listen_fd = fd;
    /* the thread takes no signal meant for the application */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &at, loop, NULL) != 0) {
        close(fd);
        listen_fd = -1;
    }
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void ctl_after_fork(void)
{
    /* the child has no control thread; it makes its own if it uses CUDA */
    if (listen_fd >= 0)
        close(listen_fd);
    listen_fd = -1;
    atomic_store(&started, false);
}
