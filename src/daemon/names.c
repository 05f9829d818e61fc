/* names: a client's name for a model to the model. Clients of Ollama add
 * ":latest" to a name without a tag (Open WebUI lists and sends them so),
 * others strip it; a configured name may carry it or not. The exact name
 * wins, then an alias, then the same with the tag taken off or put on. */
#include "daemon/names.h"

#include <event2/http.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/wbuf.h"

static int find_exact(const struct daemon *d, const char *name)
{
    int i = daemon_model_index(d, name);
    if (i >= 0)
        return i;
    for (size_t m = 0; m < d->sched.nmodels; m++) {
        if (d->dm[m].removed)
            continue;
        for (unsigned a = 0; a < d->dm[m].cfg.naliases; a++)
            if (!strcmp(d->dm[m].cfg.aliases[a], name))
                return (int)m;
    }
    return -1;
}

int names_find(const struct daemon *d, const char *name)
{
    int i = find_exact(d, name);
    if (i >= 0)
        return i;
    char other[80];
    size_t n = strlen(name);
    if (n > 7 && !strcmp(name + n - 7, ":latest")) {
        if (n - 7 >= sizeof other)
            return -1;
        memcpy(other, name, n - 7);
        other[n - 7] = '\0';
    } else if (!strchr(name, ':') && n + 8 <= sizeof other) {
        snprintf(other, sizeof other, "%s:latest", name);
    } else {
        return -1;
    }
    return find_exact(d, other);
}

/* /m/NAME/REST: the model's name into name, percent-decoded; where REST
 * begins (NULL: at the end). NAME with its '/' as %2F is one segment;
 * with its '/' as they are, the longest run of segments that names a
 * model wins ("/m/Qwen/Qwen2.5-7B/v1/chat/completions"). */
const char *names_in_path(const struct daemon *d, const char *at, char *name, size_t len)
{
    const char *end = at + strlen(at);
    for (;;) {
        size_t n = (size_t)(end - at);
        char raw[MODELNAME_MAX * 3 + 1];
        name[0] = '\0';
        if (n < sizeof raw) {
            memcpy(raw, at, n);
            raw[n] = '\0';
            size_t dl = 0;
            char *dec = evhttp_uridecode(raw, 0, &dl);
            if (dec && dl == strlen(dec))
                wbuf_copy(name, len, dec, dl);
            free(dec);
        }
        const char *prev = end > at ? memrchr(at, '/', (size_t)(end - at)) : NULL;
        if (!prev || names_find(d, name) >= 0)
            return *end ? end : NULL;
        end = prev;
    }
}
