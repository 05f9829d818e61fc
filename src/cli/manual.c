/* manual: looks pages up in the table docs/man/manual.py generates. */
#include "cli/manual.h"

#include <string.h>

const char *manual_find(const char *name)
{
    for (size_t i = 0; i < manual_npages; i++)
        if (!strcmp(manual_pages[i].name, name))
            return manual_pages[i].text;
    return NULL;
}
