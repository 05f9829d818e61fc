/* modelpath: the model a /m/NAME/... path names, for clients that cannot
 * put a model in their body (a UI pointed at one model's own API). */
#ifndef VRAM_PROXY_MODELPATH_H
#define VRAM_PROXY_MODELPATH_H

#include <stddef.h>

#include "proxy/proxyops.h"

/* The model's name at the start of a path (at: past "/m/"), into name:
 * one segment percent-decoded ("Qwen%2FQwen2.5-7B"), or the longest run of
 * segments that names a model of ops's table ("Qwen/Qwen2.5-7B/v1/..."),
 * else the first segment. Where the rest of the path begins, NULL at its
 * end. */
const char *modelpath_split(const struct proxyops *ops, const char *at, char *name, size_t len);

#endif
