/* confvalue: the values of vram.conf that are more than a number or a
 * size, each parsed whole or refused (config.c says where, and why). */
#ifndef VRAM_CONF_CONFVALUE_H
#define VRAM_CONF_CONFVALUE_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/config.h"

/* yes/true/on/1 or no/false/off/0 */
bool confvalue_bool(const char *v, bool *out);
/* gpus = "any" (one GPU), "N" (any N), or a list "0,1" (those, all at once), into m */
bool confvalue_gpus(const char *v, struct config_model *m);
/* budget = "22G" for every GPU, or "0:22G,1:20G", into c */
bool confvalue_budget(const char *v, struct config *c);
/* env = KEY=VALUE ... into m: NULL, or what is wrong */
const char *confvalue_env(const char *v, struct config_model *m);
/* user =, group =: a name as useradd takes one (letters, digits, '.',
 * '_', '-', not first, at most 32): NULL, or what is wrong */
const char *confvalue_account(const char *v);
/* discover = "ollama huggingface" (or "all"): each known store once,
 * blank-separated, into out; false for an unknown one or none */
bool confvalue_stores(const char *v, char *out, size_t len);

#endif
