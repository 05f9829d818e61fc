/* swapline: the fast-swap control line, written by libvramcap and read by
 * vram. The reader takes anything: the peer is checked to be the process
 * asked for, but that process runs whatever code its owner chose. */
#include "ipc/swapline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

socklen_t swapline_address(int pid, struct sockaddr_un *a)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, SWAPLINE_NAME "%d", pid);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

socklen_t swapline_address_alt(int pid, uint64_t nonce, struct sockaddr_un *a)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, SWAPLINE_NAME "%d.%016llx", pid,
                     (unsigned long long)nonce);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

int swapline_format_request(const struct swapline_req *q, char *out, size_t len)
{
    int n;
    switch (q->verb) {
    case SWAPLINE_SUSPEND:
        n = q->spill ? snprintf(out, len, "suspend %u %llu", q->timeout_ms,
                                (unsigned long long)q->spill)
                     : snprintf(out, len, "suspend %u", q->timeout_ms);
        break;
    case SWAPLINE_SPILL:
        n = q->spill_bytes ? snprintf(out, len, "spill %llu %llu", (unsigned long long)q->spill,
                                      (unsigned long long)q->spill_bytes)
            : q->spill     ? snprintf(out, len, "spill %llu", (unsigned long long)q->spill)
                           : snprintf(out, len, "spill");
        break;
    case SWAPLINE_RESUME:
        n = q->keep    ? snprintf(out, len, "resume %llu 1", (unsigned long long)q->floor)
            : q->floor ? snprintf(out, len, "resume %llu", (unsigned long long)q->floor)
                       : snprintf(out, len, "resume");
        break;
    case SWAPLINE_PREPARE:
        n = snprintf(out, len, "prepare");
        break;
    case SWAPLINE_DROP:
        n = snprintf(out, len, "drop");
        break;
    default:
        n = snprintf(out, len, "info");
    }
    return n > 0 && (size_t)n < len ? n : -1;
}

/* Whole unsigned decimal numbers, at most max of them, into v: how many, or
 * -1 when anything else is there. */
static int numbers(const char *s, unsigned long long *v, int max)
{
    int n = 0;
    while (*s == ' ')
        s++;
    while (*s) {
        if (n == max || *s < '0' || *s > '9')
            return -1;
        char *end;
        errno = 0;
        v[n++] = strtoull(s, &end, 10);
        if (errno || (*end && *end != ' '))
            return -1;
        s = end;
        while (*s == ' ')
            s++;
    }
    return n;
}

int swapline_parse_request(const char *line, struct swapline_req *q)
{
    unsigned long long v[2];
    int n;
    memset(q, 0, sizeof *q);
    if (!strcmp(line, "info")) {
        q->verb = SWAPLINE_INFO;
    } else if (!strcmp(line, "prepare")) {
        q->verb = SWAPLINE_PREPARE;
    } else if (!strcmp(line, "drop")) {
        q->verb = SWAPLINE_DROP;
    } else if (!strncmp(line, "suspend", 7) && (!line[7] || line[7] == ' ') &&
               (n = numbers(line + 7, v, 2)) >= 0) {
        q->verb = SWAPLINE_SUSPEND;
        if (n >= 1 && v[0] > 24ULL * 3600 * 1000)
            return -1;
        q->timeout_ms = n >= 1 ? (unsigned)v[0] : 0;
        q->spill = n == 2 ? v[1] : 0;
    } else if (!strncmp(line, "spill", 5) && (!line[5] || line[5] == ' ') &&
               (n = numbers(line + 5, v, 2)) >= 0) {
        q->verb = SWAPLINE_SPILL;
        q->spill = n >= 1 ? v[0] : 0;
        q->spill_bytes = n == 2 ? v[1] : 0;
    } else if (!strncmp(line, "resume", 6) && (!line[6] || line[6] == ' ') &&
               (n = numbers(line + 6, v, 2)) >= 0 && (n < 2 || v[1] <= 1)) {
        q->verb = SWAPLINE_RESUME;
        q->floor = n ? v[0] : 0;
        q->keep = n == 2 && v[1] == 1;
    } else {
        return -1;
    }
    return 0;
}

int swapline_format(const struct swapline_info *in, char *out, size_t len)
{
    int n = snprintf(out, len,
                     "ok state=%s bytes=%llu allocations=%u pool=%llu held=%llu policy=%s "
                     "gate_ms=%llu sync_ms=%llu pool_ms=%llu copy_ms=%llu disk=%llu disk_ms=%llu%s%s\n",
                     in->state, (unsigned long long)in->bytes, in->allocations,
                     (unsigned long long)in->pool, (unsigned long long)in->held, in->policy, (unsigned long long)in->gate_ms,
                     (unsigned long long)in->sync_ms, (unsigned long long)in->pool_ms,
                     (unsigned long long)in->copy_ms, (unsigned long long)in->disk,
                     (unsigned long long)in->disk_ms, in->why[0] ? " why=" : "", in->why);
    return n > 0 && (size_t)n < len ? n : -1;
}

void swapline_parse(char *line, struct swapline_info *in)
{
    memset(in, 0, sizeof *in);
    char *why = strstr(line, " why=");
    if (why) {
        snprintf(in->why, sizeof in->why, "%s", why + 5);
        *why = 0;
    }
    for (char *save = NULL, *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(t, '=');
        if (!eq)
            continue;
        *eq++ = 0;
        unsigned long long v = strtoull(eq, NULL, 10);
        if (strcmp(t, "state") == 0)
            snprintf(in->state, sizeof in->state, "%s", eq);
        else if (strcmp(t, "policy") == 0)
            snprintf(in->policy, sizeof in->policy, "%s", eq);
        else if (strcmp(t, "bytes") == 0)
            in->bytes = v;
        else if (strcmp(t, "pool") == 0)
            in->pool = v;
        else if (strcmp(t, "held") == 0)
            in->held = v;
        else if (strcmp(t, "allocations") == 0)
            in->allocations = (unsigned)v;
        else if (strcmp(t, "gate_ms") == 0)
            in->gate_ms = v;
        else if (strcmp(t, "sync_ms") == 0)
            in->sync_ms = v;
        else if (strcmp(t, "pool_ms") == 0)
            in->pool_ms = v;
        else if (strcmp(t, "copy_ms") == 0)
            in->copy_ms = v;
        else if (strcmp(t, "disk") == 0)
            in->disk = v;
        else if (strcmp(t, "disk_ms") == 0)
            in->disk_ms = v;
    }
}
