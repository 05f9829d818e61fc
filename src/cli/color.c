/* color: the --color choice and the NO_COLOR convention (no-color.org). */
#include "cli/color.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static enum color_when color_when = COLOR_AUTO;

int color_parse(const char *when, enum color_when *out)
{
    if (!strcmp(when, "auto"))
        *out = COLOR_AUTO;
    else if (!strcmp(when, "always") || !strcmp(when, "yes"))
        *out = COLOR_ALWAYS;
    else if (!strcmp(when, "never") || !strcmp(when, "no"))
        *out = COLOR_NEVER;
    else
        return -1;
    return 0;
}

void color_choose(enum color_when w)
{
    color_when = w;
}

bool color_on(FILE *f)
{
    if (color_when != COLOR_AUTO)
        return color_when == COLOR_ALWAYS;
    const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
    if ((no && *no) || (term && !strcmp(term, "dumb")))
        return false;
    return isatty(fileno(f));
}
