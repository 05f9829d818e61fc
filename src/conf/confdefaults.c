/* confdefaults: the models' defaults as [serve] and Ollama's variables
 * write them. */
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
