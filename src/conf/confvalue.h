/* confvalue: the values of vram.conf that are more than a number or a
 * size, each parsed whole or refused (config.c says where, and why). */
#ifndef VRAM_CONF_CONFVALUE_H
#define VRAM_CONF_CONFVALUE_H

#include <stdbool.h>
#include <stddef.h>

#include <stdint.h>

/* yes/true/on/1 or no/false/off/0 */
bool confvalue_bool(const char *v, bool *out);
/* gpus = "any" (one GPU), "N" (any N), or a list "0,1" (those, all at
 * once): the GPUs, a bit each (0: any), and how many it spans */
bool confvalue_gpus(const char *v, uint32_t *gpus, unsigned *width);
/* budget = "22G" for every GPU, or "0:22G,1:20G": into budget and set,
 * SCHED_MAX_GPUS each */
bool confvalue_budget(const char *v, uint64_t *budget, bool *set);
/* env = KEY=VALUE ... appended to env (of cap bytes, *len used), each
 * entry NUL-terminated, *n of them: NULL, or what is wrong */
const char *confvalue_env(const char *v, char *env, size_t cap, size_t *len, unsigned *n);
/* user =, group =: a name as useradd takes one (letters, digits, '.',
 * '_', '-', not first, at most 32): NULL, or what is wrong */
const char *confvalue_account(const char *v);
/* discover = "ollama huggingface" (or "all"): each known store once,
 * blank-separated, into out; false for an unknown one or none */
bool confvalue_stores(const char *v, char *out, size_t len);

#endif
