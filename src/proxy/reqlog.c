/* reqlog: a proxied request's end, said and counted (proxy/reqlog.h). */
#include "proxy/reqlog.h"

#include <stdio.h>

#include "app/log.h"
#include "core/hist.h"
#include "http/wbuf.h"

/* Milliseconds with one decimal, from microseconds. */
static void put_ms(struct wbuf *w, uint64_t us)
{
    wbuf_num(w, us / 1000, 10);
    wbuf_add(w, ".", 1);
    wbuf_num(w, us / 100 % 10, 10);
    wbuf_add(w, " ms", 3);
}

void reqlog_line(const char *model, const char *uri, int status, const struct reqlog_times *t,
                 uint64_t held_ms, const char *key)
{
    struct wbuf w;
    wbuf_init(&w, NULL);
    char pre[96];
    wbuf_add(&w, pre, log_prefix(LOG_LV_INFO, pre, sizeof pre));
    wbuf_str(&w, "proxy ");
    wbuf_str(&w, model);
    wbuf_add(&w, " ", 1);
    wbuf_str(&w, uri);
    wbuf_add(&w, " ", 1);
    wbuf_num(&w, (unsigned)status, 10);
    wbuf_str(&w, " wait ");
    put_ms(&w, t->granted ? t->granted - t->t0 : 0);
    wbuf_str(&w, ", first byte ");
    put_ms(&w, t->first ? t->first - t->t0 : 0);
    wbuf_str(&w, ", total ");
    put_ms(&w, t->end - t->t0);
    if (held_ms) { /* its model was preempted while it was answered */
        wbuf_str(&w, ", held ");
        put_ms(&w, held_ms * 1000);
    }
    if (key) {
        wbuf_str(&w, ", key ");
        wbuf_str(&w, key);
    }
    wbuf_add(&w, "\n", 1);
    if (w.len == sizeof w.b) /* cut: the line still ends */
        w.b[w.len - 1] = '\n';
    fwrite(w.b, 1, w.len, stderr);
}

void reqlog_count(struct proxy_stats *st, int status, const struct reqlog_times *t)
{
    unsigned k = 0;
    while (k < st->ncodes && st->codes[k].code != status)
        k++;
    if (k == st->ncodes) { /* a new status; past the table's room, all go under 0 */
        if (st->ncodes < PROXY_CODES - 1) {
            st->codes[st->ncodes++].code = status;
        } else {
            k = PROXY_CODES - 1;
            st->codes[k].code = 0;
            st->ncodes = PROXY_CODES;
        }
    }
    st->codes[k].n++;
    if (t->first)
        hist_observe(&st->first_byte, (double)(t->first - t->t0) / 1e6);
    hist_observe(&st->total, (double)(t->end - t->t0) / 1e6);
}
