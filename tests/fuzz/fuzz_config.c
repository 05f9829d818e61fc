/* Fuzz target: vram.conf, read by inih and checked by config.c (the line
 * scan for lines inih cannot read whole, continued commands, every value's
 * check and the search for a bad value's line, the scan for sections and
 * settings given twice). A config is written by an administrator, but a
 * daemon that crashes on a typo serves nothing, and one that accepts a cut
 * token or a merged section serves the wrong thing. And config_state_in,
 * which reads the state setting alone for vram status and top, must name
 * the file the whole parse names: else a daemon's models go unnamed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/modelname.h"
#include "conf/config.h"

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
        for (size_t i = 0; i < c->nmodels; i++) {
            const struct config_model *m = &c->models[i];
            if (!m->command[0] || strnlen(m->command, CONFIG_CMD_MAX) == CONFIG_CMD_MAX)
                abort();
            /* every bound holds: nothing overflows its milliseconds */
            if (m->start_timeout_s > 86400 || m->keep_alive_s > 365 * 86400.0)
                abort();
            for (size_t k = 0; k < i; k++) /* a section twice is refused, not merged */
                if (!strcmp(c->models[k].name, m->name))
                    abort();
            /* every name and alias keeps core/modelname.h's rules: none becomes a path */
            if (modelname_check(m->name))
                abort();
            for (unsigned a = 0; a < m->naliases; a++)
                if (modelname_check(m->aliases[a]))
                    abort();
        }
        if (c->wait_s > 86400 || c->max_body > (16ULL << 30) ||
            strnlen(c->token, sizeof c->token) == sizeof c->token)
            abort();
        char state[sizeof c->state];
        config_state_in(text, state, sizeof state);
        if (strcmp(state, c->state))
            abort();
    } else if (strnlen(err, sizeof err) == sizeof err || strncmp(err, "fuzz.conf", 9)) {
        abort(); /* every refusal names the file */
    }
    free(text);
    free(c);
    return 0;
}
