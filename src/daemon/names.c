/* names: a client's name for a model to the model. Clients of Ollama add
 * ":latest" to a name without a tag (Open WebUI lists and sends them so),
 * others strip it; a configured name may carry it or not. The exact name
 * wins, then an alias, then the same with the tag taken off or put on. */
#include "daemon/names.h"

#include <stdio.h>
#include <string.h>

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
