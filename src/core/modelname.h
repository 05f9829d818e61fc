/* modelname: what a model's name (or alias) may be, and its two escaped
 * forms: a file name (a log) and a segment of a URL (the control API).
 *
 * A name is what clients send: "qwen-7b", an Ollama name
 * ("library/llama3.1:8b", "hf.co/bartowski/Llama-3.2-3B-GGUF:Q4_K_M") or a
 * Hugging Face id ("Qwen/Qwen2.5-7B-Instruct"). Letters, digits, '-', '_',
 * '.', ':' and '/' only, 1 to MODELNAME_MAX - 1 of them; '/' separates
 * parts, none of them empty, "." or ".." (no leading, trailing or double
 * '/'), and ".." appears nowhere: whatever a name is made into, it never
 * climbs out of a folder. No '%', so its escaped forms are read back one
 * way only. Pure: no I/O. */
#ifndef VRAM_CORE_MODELNAME_H
#define VRAM_CORE_MODELNAME_H

#include <stdbool.h>
#include <stddef.h>

#define MODELNAME_MAX 128 /* with its NUL */

/* NULL when n is a good name, else what is wrong with it, for people
 * ("'..' is not allowed: ..."); the text is static. */
const char *modelname_check(const char *n);

/* n as one file name: each '/' as "%2F" ("Qwen%2FQwen2.5-7B"); the rest as
 * it is. n must be a good name. -1 when out is too small. */
int modelname_file(const char *n, char *out, size_t len);

/* n as one segment of a URL's path: every byte but letters, digits, '-',
 * '_', '.' and '~' percent-encoded ("Qwen%2FQwen2.5-7B", "llama3%3A8b").
 * -1 when out is too small. */
int modelname_url(const char *n, char *out, size_t len);

/* Whether clients mean one model by a and b: Ollama's NAME:latest is NAME. */
bool modelname_same(const char *a, const char *b);

#endif
