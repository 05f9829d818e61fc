/* Fuzz target: vram.conf, read by inih and checked by config.c (the line
 * scan for lines inih cannot read whole, continued commands, every value's
 * check and the search for a bad value's line). A config is written by an
 * administrator, but a daemon that crashes on a typo serves nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    struct config *c = malloc(sizeof *c);
    if (!text || !c) {
        free(text);
        free(c);
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    char err[600];
    if (config_parse(text, "fuzz.conf", c, err, sizeof err) == 0) {
        if (c->nmodels == 0 || c->nmodels > CONFIG_MAX_MODELS)
            abort(); /* accepted means at least one model, within the table */
        for (size_t i = 0; i < c->nmodels; i++)
            if (!c->models[i].command[0] ||
                strnlen(c->models[i].command, CONFIG_CMD_MAX) == CONFIG_CMD_MAX)
                abort();
    } else if (strnlen(err, sizeof err) == sizeof err || strncmp(err, "fuzz.conf", 9)) {
        abort(); /* every refusal names the file */
    }
    free(text);
    free(c);
    return 0;
}
