/* habits: the commands Ollama's (and llama-swap's, docker's) users type
 * first that vram has under another name or not at all (stop, ls, pull,
 * rm...): each with the vram command, or the way, that does what they
 * meant, said in one line instead of the whole usage. */
#ifndef VRAM_CLI_HABITS_H
#define VRAM_CLI_HABITS_H

/* What to do instead of `vram word` (no "vram: " before it, no newline),
 * or NULL when word is no such habit. */
const char *habits_hint(const char *word);

#endif
