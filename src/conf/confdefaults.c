/* confdefaults: the models' defaults. Ollama's variables are read only
 * where the file is silent, so that the file stays what decides; a
 * variable set to nonsense is an error, as a bad line of the file is,
 * rather than a default quietly kept. */
#include "conf/confdefaults.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/units.h"

bool confdefaults_keep(const char *v, double *out)
{
    double d;
    if (!strcmp(v, "forever") || (v[0] == '-' && units_parse_seconds(v + 1, &d) == 0)) {
        *out = -1;
        return true;
    }
    return units_parse_seconds(v, out) == 0 && *out <= 365 * 86400.0;
}

bool confdefaults_max_loaded(const char *v, unsigned *all, unsigned *gpu)
{
    char buf[64];
    if (strlen(v) >= sizeof buf)
        return false;
    snprintf(buf, sizeof buf, "%s", v);
    *all = *gpu = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        while (*t == ' ' || *t == '\t')
            t++;
        if (!isdigit((unsigned char)*t))
            return false;
        unsigned long n = strtoul(t, &end, 10);
        while (*end == ' ' || *end == '\t')
            end++;
        if (n > 1000)
            return false;
        if (!*end)
            *all = (unsigned)n;
        else if (!strcasecmp(end, "per gpu"))
            *gpu = (unsigned)n;
        else
            return false;
    }
    return true;
}

/* A whole number from 0 to max, or -1. */
static long number(const char *v, unsigned long max)
{
    char *end;
    if (!isdigit((unsigned char)*v))
        return -1;
    unsigned long n = strtoul(v, &end, 10);
    return *end || n > max ? -1 : (long)n;
}

int confdefaults_env(struct config *c, bool keep_set, bool loaded_set, bool queue_set, char *err,
                     size_t len)
{
    const char *v;
    long n;
    size_t at = 0;
#define USED(var)                                                                                  \
    if (at < sizeof c->from_env)                                                                   \
    at += (size_t)snprintf(c->from_env + at, sizeof c->from_env - at, "%s%s=%.40s", at ? " " : "", \
                           var, v)
    c->from_env[0] = '\0';
    if (!keep_set && (v = getenv("OLLAMA_KEEP_ALIVE")) && *v) {
        if (!confdefaults_keep(v, &c->keep_alive_s)) {
            snprintf(err, len,
                     "%s: OLLAMA_KEEP_ALIVE='%.60s' (from the environment): a duration, like 5m, "
                     "or -1 for good; or keep_alive = in [serve], which wins",
                     c->path, v);
            return -1;
        }
        USED("OLLAMA_KEEP_ALIVE");
    }
    if (!loaded_set && (v = getenv("OLLAMA_MAX_LOADED_MODELS")) && *v) {
        if ((n = number(v, 1000)) < 0) {
            snprintf(err, len,
                     "%s: OLLAMA_MAX_LOADED_MODELS='%.60s' (from the environment): a number of "
                     "models (0: no limit); or max_loaded = in [serve], which wins",
                     c->path, v);
            return -1;
        }
        c->max_loaded = (unsigned)n; /* Ollama's 0 is its default; here, no limit */
        USED("OLLAMA_MAX_LOADED_MODELS");
    }
    if (!queue_set && (v = getenv("OLLAMA_MAX_QUEUE")) && *v) {
        if ((n = number(v, 1000000)) < 1) {
            snprintf(err, len,
                     "%s: OLLAMA_MAX_QUEUE='%.60s' (from the environment): a number of "
                     "requests; or max_queue = in [serve], which wins",
                     c->path, v);
            return -1;
        }
        c->max_queue = n > CONFIG_MAX_QUEUE ? CONFIG_MAX_QUEUE : (unsigned)n;
        USED("OLLAMA_MAX_QUEUE");
    }
#undef USED
    return 0;
}
