/* openairoutes: the models as OpenAI lists them, with each one's state in
 * an extra field, as llama-swap's: "ready" and "busy" are loaded,
 * "suspended" in host RAM. */
#include "proxy/openairoutes.h"

#include <event2/http.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/render_json.h"
#include "core/sched.h"
#include "http/front.h"

static json_t *model_object(const struct proxyops_model *v)
{
    return json_pack("{s:s, s:s, s:i, s:s, s:s}", "id", v->name, "object", "model", "created", 0,
                     "owned_by", "vram", "state", sched_state_name(v->state));
}

static void reply_json(struct front_req *r, json_t *j)
{
    char *text = j ? json_dumps(j, JSON_COMPACT | RENDER_JSON_REALS) : NULL;
    static const char *const names[] = {"Content-Type"};
    static const char *const values[] = {"application/json"};
    if (text)
        front_reply(r, 200, names, values, 1, text, strlen(text));
    else
        front_error(r, ERRBODY_INTERNAL, "out of memory", 0);
    free(text);
    json_decref(j);
}

void openairoutes_list(const struct proxyops *o, struct front_req *r)
{
    json_t *a = json_array();
    struct proxyops_model v;
    for (unsigned i = 0, n = o->count(o->d); i < n; i++)
        if (o->model(o->d, i, &v))
            json_array_append_new(a, model_object(&v));
    reply_json(r, json_pack("{s:s, s:o}", "object", "list", "data", a));
}

void openairoutes_model(const struct proxyops *o, struct front_req *r, const char *name)
{
    char *asked = evhttp_uridecode(name, 0, NULL);
    int i = asked ? o->find(o->d, asked) : -1; /* an alias, NAME:latest */
    if (i < 0) {
        char msg[200];
        snprintf(msg, sizeof msg, "no model '%.100s' here (GET /v1/models lists them)",
                 asked ? asked : name);
        front_error(r, ERRBODY_NO_MODEL, msg, 0);
    } else {
        struct proxyops_model v;
        o->model(o->d, (unsigned)i, &v);
        reply_json(r, model_object(&v));
    }
    free(asked);
}
