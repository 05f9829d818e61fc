/* logtail: reading the end of a log and following it. A log is a model's
 * stdout and stderr, appended to by the model (super.c) and read here
 * without trusting its content: lines go out as server-sent events with
 * every \r taken out (a \r would end an event's line), a line longer than
 * PARTIAL_MAX is cut, and a reader that falls behind is not fed more
 * than its connection holds. The file is opened without following links
 * and only if it is a regular file. */
#include "daemon/logtail.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http/front.h"

#define TAIL_BYTES   (256 * 1024) /* read back at most this much for the last lines */
#define STEP_BYTES   (64 * 1024)  /* read per follower per second at most */
#define PARTIAL_MAX  8192         /* a line without its end yet, kept until it ends */
#define BEHIND_BYTES (1 << 20)    /* a follower with this much unsent waits */
#define QUIET_TICKS  15           /* a comment after this many seconds of silence */

struct follower {
    struct front_req *req;
    char path[1024];
    int fd;
    dev_t dev;
    ino_t ino;
    off_t off;
    char partial[PARTIAL_MAX];
    size_t npartial;
    unsigned quiet;
};

struct logtail {
    struct event *timer;
    struct follower *f[LOGTAIL_MAX_FOLLOWERS];
    unsigned n;
};

static int open_log(const char *path, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return -1;
    if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    return fd;
}

/* Each whole line of p as a data: line of one event. */
static void add_event(struct evbuffer *b, const char *type, const char *p, size_t n)
{
    if (type)
        evbuffer_add_printf(b, "event: %s\n", type);
    if (!n) /* an event without data is never dispatched */
        evbuffer_add(b, "data: \n", 7);
    while (n) {
        const char *nl = memchr(p, '\n', n);
        size_t len = nl ? (size_t)(nl - p) : n;
        evbuffer_add(b, "data: ", 6);
        for (size_t i = 0; i < len;) {
            const char *cr = memchr(p + i, '\r', len - i);
            size_t run = cr ? (size_t)(cr - p - i) : len - i;
            evbuffer_add(b, p + i, run);
            i += run + (cr ? 1 : 0);
        }
        evbuffer_add(b, "\n", 1);
        p += len + (nl ? 1 : 0);
        n -= len + (nl ? 1 : 0);
    }
    evbuffer_add(b, "\n", 1);
}

/* The last `lines` lines of fd (size bytes) into *out (malloc'd): *n bytes,
 * of which *whole end in a newline. */
static int read_tail(int fd, off_t size, unsigned lines, char **out, size_t *n, size_t *whole)
{
    size_t want = size > TAIL_BYTES ? TAIL_BYTES : (size_t)size;
    off_t from = size - (off_t)want;
    char *buf = malloc(want + 1);
    if (!buf)
        return -1;
    size_t got = 0;
    while (got < want) {
        ssize_t r = pread(fd, buf + got, want - got, from + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    size_t end = got; /* whole lines end here */
    while (end && buf[end - 1] != '\n')
        end--;
    size_t start = end;
    unsigned seen = 0;
    while (start && seen <= lines) { /* back over `lines` newlines, to just after the one before */
        if (buf[start - 1] == '\n' && ++seen > lines)
            break;
        start--;
    }
    if (start == 0 && from > 0) { /* began mid-line: that line is not whole */
        const char *nl = memchr(buf, '\n', end);
        start = nl ? (size_t)(nl - buf) + 1 : end;
    }
    memmove(buf, buf + start, got - start);
    *out = buf;
    *n = got - start;
    *whole = end - start;
    return 0;
}

static void drop(struct logtail *lt, unsigned k)
{
    struct follower *f = lt->f[k];
    if (f->fd >= 0)
        close(f->fd);
    free(f);
    lt->f[k] = lt->f[--lt->n];
    if (!lt->n)
        evtimer_del(lt->timer);
}

bool logtail_closed(struct logtail *lt, const struct front_req *r)
{
    for (unsigned k = 0; k < lt->n; k++)
        if (lt->f[k]->req == r) {
            drop(lt, k);
            return true;
        }
    return false;
}

/* What was added since the last look; a file replaced or cut short is
 * read again from its start, after a "reset" event. */
static void poll_one(struct follower *f, struct evbuffer *b)
{
    struct stat st;
    bool reset = false;
    if (stat(f->path, &st) == 0 && (f->fd < 0 || st.st_ino != f->ino || st.st_dev != f->dev)) {
        int fd = open_log(f->path, &st);
        if (fd >= 0) {
            reset = f->fd >= 0;
            if (f->fd >= 0)
                close(f->fd);
            f->fd = fd;
            f->dev = st.st_dev;
            f->ino = st.st_ino;
            f->off = 0;
        }
    }
    if (f->fd < 0 || fstat(f->fd, &st) < 0)
        return;
    if (st.st_size < f->off) {
        reset = true;
        f->off = 0;
    }
    if (reset) {
        f->npartial = 0;
        add_event(b, "reset", "", 0);
    }
    /* front holds at most about BEHIND_BYTES of an answer its client has not read */
    if (st.st_size == f->off || front_backlogged(f->req))
        return;
    char buf[STEP_BYTES];
    size_t want = st.st_size - f->off > STEP_BYTES ? STEP_BYTES : (size_t)(st.st_size - f->off);
    ssize_t got = pread(f->fd, buf, want, f->off);
    if (got <= 0)
        return;
    f->off += got;
    const char *p = buf, *end = buf + got;
    const char *last = memrchr(p, '\n', (size_t)got);
    if (!last) { /* no line ends yet: keep it, or cut it when too long */
        size_t room = PARTIAL_MAX - f->npartial;
        size_t take = (size_t)got < room ? (size_t)got : room;
        memcpy(f->partial + f->npartial, p, take);
        f->npartial += take;
        if (f->npartial == PARTIAL_MAX) {
            add_event(b, NULL, f->partial, f->npartial);
            f->npartial = 0;
        }
        return;
    }
    /* the kept beginning and this block's whole lines make one event */
    struct evbuffer *lines = evbuffer_new();
    if (lines) {
        evbuffer_add(lines, f->partial, f->npartial);
        evbuffer_add(lines, p, (size_t)(last + 1 - p));
        size_t n = evbuffer_get_length(lines);
        add_event(b, NULL, (const char *)evbuffer_pullup(lines, -1), n);
        evbuffer_free(lines);
    }
    f->npartial = (size_t)(end - last - 1) < PARTIAL_MAX ? (size_t)(end - last - 1) : PARTIAL_MAX;
    memcpy(f->partial, last + 1, f->npartial);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct logtail *lt = arg;
    for (unsigned k = 0; k < lt->n; k++) {
        struct follower *f = lt->f[k];
        struct evbuffer *b = evbuffer_new();
        if (!b)
            return;
        poll_one(f, b);
        /* a comment now and then keeps proxies in between from timing out */
        if (!evbuffer_get_length(b) && ++f->quiet >= QUIET_TICKS)
            evbuffer_add(b, ":\n\n", 3);
        if (evbuffer_get_length(b)) {
            f->quiet = 0;
            front_reply_buffer(f->req, b);
        }
        evbuffer_free(b);
    }
}

struct logtail *logtail_new(struct event_base *base)
{
    struct logtail *lt = calloc(1, sizeof *lt);
    if (lt && !(lt->timer = event_new(base, -1, EV_PERSIST, on_tick, lt))) {
        free(lt);
        return NULL;
    }
    return lt;
}

void logtail_free(struct logtail *lt)
{
    if (!lt)
        return;
    while (lt->n)
        drop(lt, lt->n - 1);
    event_free(lt->timer);
    free(lt);
}

static void reply_text(struct front_req *r, int code, const char *text, size_t n)
{
    const char *name = "Content-Type";
    const char *type = code == 200 ? "text/plain; charset=utf-8" : "application/json";
    front_reply(r, code, &name, &type, 1, text, n);
}

void logtail_serve(struct logtail *lt, struct front_req *req, const char *path, unsigned lines,
                   bool follow)
{
    if (lines > LOGTAIL_MAX_LINES)
        lines = LOGTAIL_MAX_LINES;
    struct stat st;
    int fd = open_log(path, &st);
    char *text = NULL;
    size_t n = 0, whole = 0;
    if (fd >= 0 && read_tail(fd, st.st_size, lines, &text, &n, &whole) < 0) {
        close(fd);
        static const char msg[] = "{\"error\":\"out of memory\"}\n";
        reply_text(req, 500, msg, sizeof msg - 1);
        return;
    }
    if (!follow) {
        if (fd < 0) {
            static const char msg[] =
                "{\"error\":\"no log yet: it is written once the model starts\"}\n";
            reply_text(req, 404, msg, sizeof msg - 1);
        } else {
            reply_text(req, 200, text, n);
        }
        free(text);
        if (fd >= 0)
            close(fd);
        return;
    }
    struct follower *f = lt->n < LOGTAIL_MAX_FOLLOWERS ? calloc(1, sizeof *f) : NULL;
    if (!f) {
        free(text);
        if (fd >= 0)
            close(fd);
        static const char msg[] = "{\"error\":\"too many logs followed; try again\"}\n";
        reply_text(req, 503, msg, sizeof msg - 1);
        return;
    }
    f->req = req;
    snprintf(f->path, sizeof f->path, "%s", path);
    f->fd = fd;
    if (fd >= 0) {
        f->dev = st.st_dev;
        f->ino = st.st_ino;
        f->off = st.st_size;
        f->npartial = n - whole < PARTIAL_MAX ? n - whole : PARTIAL_MAX;
        memcpy(f->partial, text + whole, f->npartial);
    }
    /* listed first: a part that finds the client gone is told on a later turn */
    lt->f[lt->n++] = f;
    front_set_arg(req, f);
    front_reply_events(req);
    struct evbuffer *b = evbuffer_new();
    if (b) {
        evbuffer_add(b, ": vram serve log\n\n", 18);
        if (whole)
            add_event(b, NULL, text, whole);
        front_reply_buffer(req, b);
        evbuffer_free(b);
    }
    free(text);
    if (lt->n == 1) {
        struct timeval tv = {1, 0};
        evtimer_add(lt->timer, &tv);
    }
}
