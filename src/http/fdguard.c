/* fdguard: listeners out of descriptors.
 *
 * accept(2) failing with EMFILE leaves the connection in the backlog and
 * the listening socket readable, so libevent calls again at once: the loop
 * spun and logged every failure (900 MB of "Too many open files" in a
 * minute, issue 16), serving nothing else. Here the listener stops for
 * PAUSE_MS, the loop goes on with the connections it has, and the warning
 * is written at most once a minute with how many failures it stands for. */
#include "http/fdguard.h"

#include <errno.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "host/clock.h"
#include "app/log.h"

#define PAUSE_MS      100
#define WARN_EVERY_MS 60000

struct fdguard {
    struct evconnlistener *l;
    struct event *timer;
    const char *what;
    bool paused, held;
};

/* shared by every listener: they run out of the same descriptors. The
 * error callback is handed the accept callback's argument (front.c's
 * server, not the guard), so a guard is found by its listener. */
#define MAX_GUARDS 8
static struct fdguard *guards[MAX_GUARDS];
static unsigned nguards;
static uint64_t last_warn_ms;
static unsigned long unsaid;

static void sync_state(struct fdguard *g)
{
    if (g->paused || g->held)
        evconnlistener_disable(g->l);
    else
        evconnlistener_enable(g->l);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct fdguard *g = arg;
    g->paused = false;
    sync_state(g);
}

static void on_error(struct evconnlistener *l, void *arg)
{
    (void)arg;
    int e = errno;
    struct fdguard *g = NULL;
    for (unsigned k = 0; k < nguards && !g; k++)
        if (guards[k]->l == l)
            g = guards[k];
    if (!g)
        return;
    g->paused = true;
    sync_state(g);
    struct timeval tv = {0, PAUSE_MS * 1000};
    evtimer_add(g->timer, &tv);
    unsaid++;
    uint64_t now = clock_mono_ms();
    if (last_warn_ms && now - last_warn_ms < WARN_EVERY_MS)
        return;
    last_warn_ms = now;
    struct rlimit rl = {0};
    getrlimit(RLIMIT_NOFILE, &rl);
    if (e == EMFILE || e == ENFILE)
        log_msg(LOG_LV_WARN,
                "%s: out of file descriptors (%s, limit %llu): new connections wait while those "
                "open are served; %lu refused accept%s since the last warning. Raise the limit "
                "(LimitNOFILE= in the unit, ulimit -n) or lower the clients' connections",
                g->what, e == EMFILE ? "this process's" : "the system's",
                (unsigned long long)rl.rlim_cur, unsaid, unsaid == 1 ? "" : "s");
    else
        log_msg(LOG_LV_WARN, "%s: accept failed: %s (%lu times since the last warning)", g->what,
                strerror(e), unsaid);
    unsaid = 0;
}

struct fdguard *fdguard_watch(struct evconnlistener *l, const char *what)
{
    struct fdguard *g = nguards < MAX_GUARDS ? calloc(1, sizeof *g) : NULL;
    if (!g)
        return NULL;
    g->l = l;
    g->what = what;
    g->timer = evtimer_new(evconnlistener_get_base(l), on_resume, g);
    if (!g->timer) {
        free(g);
        return NULL;
    }
    guards[nguards++] = g;
    evconnlistener_set_error_cb(l, on_error);
    return g;
}

void fdguard_hold(struct fdguard *g, bool hold)
{
    if (g && g->held != hold) {
        g->held = hold;
        sync_state(g);
    }
}

unsigned fdguard_cap(enum fdguard_kind kind)
{
    struct rlimit rl = {1024, 1024};
    getrlimit(RLIMIT_NOFILE, &rl);
    rlim_t all = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1u << 20 ? 1u << 20 : rl.rlim_cur;
    rlim_t keep = all / 4 < 32 ? 32 : all / 4 > 1024 ? 1024 : all / 4;
    rlim_t rest = all > keep + 64 ? all - keep : 64;
    rlim_t control = rest / 8 < 32 ? 32 : rest / 8 > 512 ? 512 : rest / 8;
    rlim_t metrics = rest / 64 < 8 ? 8 : rest / 64 > 64 ? 64 : rest / 64;
    rlim_t proxy = rest > control + metrics + 16 ? rest - control - metrics : 16;
    return (unsigned)(kind == FDGUARD_CONTROL ? control : kind == FDGUARD_METRICS ? metrics : proxy);
}
