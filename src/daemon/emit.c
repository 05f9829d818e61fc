/* emit: what happened to a model, said once: to the log (a failure as a
 * warning), the store's events and the event stream's listeners. */
#include "daemon/emit.h"

#include <stdio.h>
#include <string.h>

#include "host/clock.h"
#include "app/log.h"
#include "app/store.h"
#include "daemon/events.h"

void emit_event(struct daemon *d, unsigned model, const char *kind, double seconds,
                const char *detail)
{
    emit_event_reason(d, model, kind, seconds, detail, NULL);
}

void emit_event_reason(struct daemon *d, unsigned model, const char *kind, double seconds,
                       const char *detail, json_t *reason)
{
    const char *name = model < d->sched.nmodels ? d->smodels[model].name : "";
    store_event(d->store, clock_wall_ms(), name, kind, seconds, detail);
    /* a failure is worth a warning; the rest is the models' life */
    enum log_level lv = strstr(kind, "fail") || !strcmp(kind, "crashed") ? LOG_LV_WARN : LOG_LV_INFO;
    char took[32] = "";
    if (seconds > 0)
        snprintf(took, sizeof took, " (%.2f s)", seconds);
    log_msg(lv, "%s: %s%s%s%s", name, kind, detail && *detail ? ": " : "", detail ? detail : "",
            took);
    events_send(d->events, clock_wall_ms(), name, kind, seconds, detail, reason);
    json_decref(reason);
}
