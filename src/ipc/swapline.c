/* swapline: the fast-swap control line, written by libvramcap and read by
 * vram. The reader takes anything: the peer is checked to be the process
 * asked for, but that process runs whatever code its owner chose. */
#include "ipc/swapline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

socklen_t swapline_address(int pid, struct sockaddr_un *a)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "vram-swap-%d", pid);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

int swapline_format(const struct swapline_info *in, char *out, size_t len)
{
    int n = snprintf(out, len,
                     "ok state=%s bytes=%llu allocations=%u pool=%llu policy=%s gate_ms=%llu "
                     "sync_ms=%llu pool_ms=%llu copy_ms=%llu%s%s\n",
                     in->state, (unsigned long long)in->bytes, in->allocations,
                     (unsigned long long)in->pool, in->policy, (unsigned long long)in->gate_ms,
                     (unsigned long long)in->sync_ms, (unsigned long long)in->pool_ms,
                     (unsigned long long)in->copy_ms, in->why[0] ? " why=" : "", in->why);
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
    }
}
