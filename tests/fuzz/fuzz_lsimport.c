/* Fuzz target: vram import llama-swap. Any bytes are read as llama-swap's
 * YAML (cli/lsconf.c: libyaml, anchors and merge keys, macros); whatever
 * is read is written as vram.conf (cli/lswrite.c), and what is written
 * must be a configuration vram serve takes (config.c): the importer
 * promises that, so a line too long for inih, a value cut at a ';', a name
 * or an alias vram refuses, a key twice, is a crash here. A configuration
 * is someone's file, but one found on the web and imported as it is
 * should neither crash the importer nor make a file that fails later. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/lsconf.h"
#include "cli/lswrite.h"
#include "conf/config.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* the daemon's places without root: the socket's folder */
    setenv("XDG_RUNTIME_DIR", "/tmp", 0);
    setenv("LS_FUZZ", "/models", 1); /* ${env.LS_FUZZ} is set, other names are not */
    unsetenv("OLLAMA_KEEP_ALIVE");
    unsetenv("OLLAMA_MAX_LOADED_MODELS");
    unsetenv("OLLAMA_MAX_QUEUE");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    struct lsconf *c = calloc(1, sizeof *c);
    if (!text || !c) {
        free(text);
        free(c);
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    char err[600];
    if (lsconf_read(text, size, c, err, sizeof err) == 0) {
        char *out = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&out, &n);
        struct lswrite_opts o = {"fuzz.yaml", "127.0.0.1:8080", "8G"};
        size_t kept = f ? lswrite(c, &o, f, NULL) : 0;
        if (f)
            fclose(f);
        struct config *cfg = kept ? malloc(sizeof *cfg) : NULL;
        char why[600];
        if (cfg && config_parse(out, "imported.conf", cfg, why, sizeof why) < 0) {
            fprintf(stderr, "the importer wrote what vram serve refuses: %s\n%s\n", why, out);
            abort();
        }
        if (cfg && cfg->nmodels != kept)
            abort(); /* every model written is read back, none merged */
        free(cfg);
        free(out);
    } else if (!err[0]) {
        abort(); /* every refusal says why */
    }
    lsconf_free(c);
    free(c);
    free(text);
    return 0;
}
