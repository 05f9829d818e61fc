/* api: the control API of `vram serve` on its Unix socket (and /metrics on
 * `metrics = HOST:PORT`): what `vram ps`, `load`, `unload`, `suspend` and
 * `resume` talk to. Documented in docs/serve.md. */
#ifndef VRAM_DAEMON_API_H
#define VRAM_DAEMON_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/daemon.h"

struct api;
struct front_req;

/* Whether a daemon answers on socket_path now (connect succeeds): asked
 * before anything of the state is touched, so that a second vram serve on
 * the same configuration adopts nothing of the first's. */
bool api_other_answers(const char *socket_path);

/* Listens on d->cfg.socket (and d->cfg.metrics): 0, or -1 with err. */
int api_listen(struct daemon *d, struct api **out, char *err, size_t len);

/* Answers r as the control socket does (every route, /vram/... and /ui
 * included): the socket's own requests, and those the proxy passes on
 * from its address (passed: the proxy has screened r's Host and its key,
 * proxy/panel.c). */
void api_serve(struct api *api, struct front_req *r, bool passed);

/* Removes the socket file api_listen made, if it still is that one. */
void api_remove_socket(struct api *api);

/* Answers the requests waiting for a model to reach a state, or out of
 * time at now_ms. Called after every scheduler step. */
void api_states_changed(struct api *api, uint64_t now_ms);

/* A model as the API shows it (caller decrefs). */
json_t *api_model_json(const struct daemon *d, unsigned i);

/* All of them, as GET /v1/models answers (caller decrefs). */
json_t *api_models_json(const struct daemon *d);

#endif
