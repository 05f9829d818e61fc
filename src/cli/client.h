/* client: the CLI's side of `vram serve`'s control API, HTTP over the
 * daemon's Unix socket (--socket PATH, $VRAM_SOCKET, or the default). */
#ifndef VRAM_CLI_CLIENT_H
#define VRAM_CLI_CLIENT_H

#include <jansson.h>
#include <stddef.h>

#include "http/ucall.h"

/* The socket to use: explicit, else $VRAM_SOCKET, else (not root) the
 * user daemon's in $XDG_RUNTIME_DIR/vram when it is there, else
 * /run/vram/vram.sock. */
const char *client_socket(const char *explicit_path);

/* method "GET" or "POST" on path with an optional JSON body. Returns the
 * HTTP status with the parsed reply in *reply (caller decrefs), or -1 with
 * err saying why the daemon could not be reached. */
long client_call(const char *socket, const char *method, const char *path, json_t *body,
                 json_t **reply, char *err, size_t len);

/* GET path, its body handed to part as it comes (a log, a followed one):
 * the status, or -1 with err saying why the daemon could not be reached or
 * how the answer broke off. */
long client_stream(const char *socket, const char *path, ucall_part_fn part, void *arg,
                   char *err, size_t len);

/* "/v1/models/NAME/VERB" (verb NULL: without it) into out, NAME
 * percent-encoded (a '/' in it as %2F). -1 with err when name breaks
 * core/modelname.h's rules: no daemon serves such a name. */
int client_model_path(const char *name, const char *verb, char *out, size_t len, char *err,
                      size_t errlen);

/* Prints a model reply ("qwen: ready on GPU 0, 5.3 GiB, port 21000") or
 * the daemon's error; returns the exit code: 0, 1, or 2 for bad input. */
int client_report(const char *verb, long status, json_t *reply, const char *err);

#endif
