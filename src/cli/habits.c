/* habits: one line each, naming the vram command first. */
#include "cli/habits.h"

#include <stddef.h>
#include <string.h>

static const struct {
    const char *word, *hint;
} hints[] = {
    {"stop", "'vram stop' is Ollama's: vram unload MODEL stops a model of vram serve (vram ps "
             "lists them); vram suspend MODEL moves it to host RAM instead"},
    {"ls", "'vram ls' is Ollama's: vram ps lists the models vram serve serves (GET /api/tags "
           "on its address, as Ollama's clients ask); vram fit NAME reads one on disk"},
    {"list", "'vram list' is Ollama's: vram ps lists the models vram serve serves (GET "
             "/api/tags on its address, as Ollama's clients ask)"},
    {"pull", "vram downloads nothing: it serves what is on disk. Get a model with ollama pull "
             "or hf download; vram fit NAME (or org/repo:QUANT before it is there, with "
             "--online) says whether it fits; then serve it (discover = all, or a [model] "
             "section: docs/migrate.md)"},
    {"push", "vram downloads and uploads nothing: it serves what is on disk (ollama push, hf "
             "upload)"},
    {"rm", "vram keeps no models of its own: remove one where it was downloaded (ollama rm, hf "
           "cache delete); vram unload MODEL stops a running one"},
    {"create", "vram makes no models: a [model NAME] section in vram.conf serves a file as "
               "NAME (its command, file =: docs/migrate.md)"},
    {"cp", "vram copies no models: another name for one is aliases = in its [model] section"},
    {"show", "vram fit NAME shows a model's size, layers and what fits; GET /api/show on vram "
             "serve's address gives Ollama's answer"},
    {"start", "vram load MODEL starts a model of vram serve (and vram serve starts the daemon)"},
    {"restart", "vram unload MODEL, then vram load MODEL (kill -HUP the daemon re-reads "
                "vram.conf)"},
    {"log", "vram logs MODEL [-f] shows what a model wrote"},
};

const char *habits_hint(const char *word)
{
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
        if (!strcmp(word, hints[i].word))
            return hints[i].hint;
    return NULL;
}
