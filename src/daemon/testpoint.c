/* testpoint: a crash on demand, where a test asks for one. The variable
 * is read at each point (a model's start, a few times a minute at most),
 * so a test can set it for one daemon and not the next. */
#include "daemon/testpoint.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

void testpoint(const char *name)
{
    const char *at = getenv("VRAM_TEST_DIE_AT");
    if (at && !strcmp(at, name))
        raise(SIGKILL);
}
