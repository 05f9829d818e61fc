/* spankconf: the plugin's plugstack.conf arguments, each checked: a typo
 * must not quietly leave a node without its caps or its epilog. */
#include "slurm/spankconf.h"

#include <stdio.h>
#include <string.h>

#include "core/units.h"

enum kind { PATH, YES_NO, SECONDS, ENV };

static int yes_no(const char *v, bool *out)
{
    if (!strcmp(v, "yes") || !strcmp(v, "1") || !strcmp(v, "true"))
        *out = true;
    else if (!strcmp(v, "no") || !strcmp(v, "0") || !strcmp(v, "false"))
        *out = false;
    else
        return -1;
    return 0;
}

/* One value into its field: 0, or -1 refused. */
static int set(struct spankconf *c, enum kind k, void *field, double hi, const char *v)
{
    switch (k) {
    case PATH:
        if (v[0] != '/')
            return -1;
        *(const char **)field = v;
        return 0;
    case YES_NO:
        return yes_no(v, field);
    case SECONDS: {
        double s;
        if (units_parse_seconds(v, &s) < 0 || s < 0 || s > hi)
            return -1;
        *(double *)field = s;
        return 0;
    }
    case ENV:
        if (v[0] == '=' || !strchr(v, '=') || c->nenv == SPANKCONF_ENV)
            return -1;
        c->env[c->nenv++] = v;
        return 0;
    }
    return -1;
}

int spankconf_parse(int argc, char **argv, const char *default_vram, struct spankconf *c, char *err,
                    size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->vram = default_vram;
    c->swap = c->epilog = true;
    c->grace = 5;
    const struct {
        const char *key;
        enum kind kind;
        void *field;
        double hi;
        const char *fix;
    } args[] = {
        {"vram", PATH, &c->vram, 0, "give the full path of the vram program"},
        {"swap", YES_NO, &c->swap, 0, "give yes or no"},
        {"wait", SECONDS, &c->wait, 7 * 86400, "give a duration such as 0, 90s or 10m"},
        {"epilog", YES_NO, &c->epilog, 0, "give yes or no"},
        {"grace", SECONDS, &c->grace, 600, "give a duration from 0 to 600 seconds, such as 5s"},
        {"env", ENV, NULL, 0, "give NAME=VALUE (16 at most)"},
    };
    const size_t nargs = sizeof args / sizeof args[0];
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *eq = strchr(a, '=');
        size_t k = 0;
        while (eq && k < nargs &&
               (strlen(args[k].key) != (size_t)(eq - a) || strncmp(a, args[k].key, (size_t)(eq - a))))
            k++;
        if (!eq || k == nargs) {
            snprintf(err, errlen,
                     "plugstack.conf: '%s' is not an argument of spank_vram.so; it takes "
                     "vram=PATH, swap=yes|no, wait=T, epilog=yes|no, grace=T, env=NAME=VALUE",
                     a);
            return -1;
        }
        if (set(c, args[k].kind, args[k].field, args[k].hi, eq + 1) < 0) {
            snprintf(err, errlen, "plugstack.conf: spank_vram.so's '%s': %s", a, args[k].fix);
            return -1;
        }
    }
    return 0;
}
