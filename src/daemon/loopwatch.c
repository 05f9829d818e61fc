/* loopwatch: the heartbeat and the named sections. One loop per process,
 * so the state is the file's own; only the loop's thread touches it. */
#include "daemon/loopwatch.h"

#include <event2/event.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "host/clock.h"
#include "app/log.h"

static struct loopwatch_stats stats;
static struct event *beat;
static uint64_t due_ms;
static const char *doing;
static uint64_t doing_since;
static unsigned depth;

static void arm(void)
{
    struct timeval tv = {0, LOOPWATCH_MS * 1000};
    due_ms = clock_mono_ms() + LOOPWATCH_MS;
    evtimer_add(beat, &tv);
}

static void on_beat(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    uint64_t now = clock_mono_ms(), late = now > due_ms ? now - due_ms : 0;
    hist_observe(&stats.lag, (double)late / 1000);
    if (late > stats.max_ms)
        stats.max_ms = late;
    if (late > LOOPWATCH_WARN_MS)
        stats.late++;
    arm();
}

int loopwatch_start(struct event_base *base)
{
    beat = evtimer_new(base, on_beat, NULL);
    if (!beat)
        return -1;
    arm();
    return 0;
}

void loopwatch_begin(const char *what)
{
    if (depth++ == 0) {
        doing = what;
        doing_since = clock_mono_ms();
    }
}

void loopwatch_end(void)
{
    if (!depth || --depth)
        return;
    uint64_t took = clock_mono_ms() - doing_since;
    if (took > LOOPWATCH_WARN_MS) {
        log_msg(LOG_LV_WARN, "the loop was held %llu ms by %s: every request waited",
                (unsigned long long)took, doing);
        if (took >= stats.max_ms)
            snprintf(stats.worst_what, sizeof stats.worst_what, "%s", doing);
    }
    doing = NULL;
}

const struct loopwatch_stats *loopwatch_stats(void)
{
    return &stats;
}
