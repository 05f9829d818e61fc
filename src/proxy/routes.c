/* routes: the rows, and the answers that are only a call.
 *
 * The first row that matches a path is its route: an exact path, or a
 * prefix (a path that ends in '*': "/m/" and anything after it); a prefix
 * comes after the rows it holds (/v1/models before the rest of /v1/),
 * which the test checks. A path no row matches gets 404, as OpenAI's API
 * answers it. */
#include "proxy/routes.h"

#include <stdio.h>
#include <string.h>

#include "http/front.h"
#include "proxy/dash.h"
#include "proxy/ollamaroutes.h"
#include "proxy/openairoutes.h"
#include "proxy/panel.h"

#define NO_ROUTE                                                                                   \
    "no route: /v1/... and /api/... name the model in the body, /m/NAME/... in the path"

/* ---- answers ---- */

/* the dashboard: never on the proxy's origin, which the models' pages share */
static void ui(const struct routes_ctx *x, const struct route *rt, struct front_req *r,
               const char *path)
{
    (void)rt, (void)path;
    if (x->dash)
        dash_redirect(x->dash, r);
    else
        front_error(r, ERRBODY_NO_ROUTE, "the dashboard has no address (the log says why)", 0);
}

/* the control API, behind the token (panel.h) */
static void control(const struct routes_ctx *x, const struct route *rt, struct front_req *r,
                    const char *path)
{
    (void)rt;
    panel_route(x->panel, r, path, x->ops->cfg->keys.n > 0, x->key >= 0);
}

static void models(const struct routes_ctx *x, const struct route *rt, struct front_req *r,
                   const char *path)
{
    (void)rt, (void)path;
    openairoutes_list(x->ops, r);
}

static void model(const struct routes_ctx *x, const struct route *rt, struct front_req *r,
                  const char *path)
{
    openairoutes_model(x->ops, r, path + strlen(rt->path) - 1);
}

static void to_model(const struct routes_ctx *x, const struct route *rt, struct front_req *r,
                     const char *path)
{
    x->to_model(x->px, r, path, rt, x->key);
}

#define OLLAMA(name)                                                                               \
    static void ollama_##name(const struct routes_ctx *x, const struct route *rt,                  \
                              struct front_req *r, const char *path)                               \
    {                                                                                              \
        (void)rt, (void)path;                                                                      \
        ollamaroutes_##name(x->ollama, r);                                                         \
    }
OLLAMA(root)
OLLAMA(version)
OLLAMA(tags)
OLLAMA(ps)
OLLAMA(show)

/* Ollama's routes that manage its store: vram serve has none of its own
 * (it serves what is on the machine), so each says what to do instead,
 * in Ollama's {"error": ...}, as 501: Ollama's clients show that text. */
static void not_here(const struct routes_ctx *x, const struct route *rt, struct front_req *r,
                     const char *path)
{
    (void)x, (void)path;
    front_error(r, ERRBODY_NOT_IMPLEMENTED, rt->says, 0);
}

static void no_route(const struct routes_ctx *x, const struct route *rt, struct front_req *r,
                     const char *path)
{
    (void)x, (void)rt, (void)path;
    front_error(r, ERRBODY_NO_ROUTE, NO_ROUTE, 0);
}

/* ---- the rows ---- */

#define OLLAMA_ERR ERRBODY_PLAIN
#define OPENAI_ERR ERRBODY_OPENAI

/* clang-format off */
const struct route routes_table[] = {
    /* path               methods      body               browser          errors      own_key answer */
    /* the dashboard and the control API */
    {"/ui",               ROUTES_READ, ROUTES_BODY_NONE,  BROWSER_PAGE,    OLLAMA_ERR, true,  ui},
    {"/ui/*",             ROUTES_READ, ROUTES_BODY_NONE,  BROWSER_PAGE,    OLLAMA_ERR, true,  ui},
    {"/vram/*",           ROUTES_ANY,  ROUTES_BODY_OWN,   BROWSER_KEY,     OLLAMA_ERR, true,  control},
    /* OpenAI's */
    {"/v1/models",        ROUTES_READ, ROUTES_BODY_NONE,  BROWSER_READS,   OPENAI_ERR, false, models},
    {"/v1/models/*",      ROUTES_READ, ROUTES_BODY_NONE,  BROWSER_READS,   OPENAI_ERR, false, model},
    {"/v1/*",             ROUTES_POST, ROUTES_BODY_MODEL, BROWSER_JSON,    OPENAI_ERR, false, to_model},
    /* Ollama's */
    {"/",                 ROUTES_READ, ROUTES_BODY_NONE,  BROWSER_READS,   OLLAMA_ERR, false, ollama_root},
    {"/api/version",      ROUTES_READ, ROUTES_BODY_NONE,  BROWSER_READS,   OLLAMA_ERR, false, ollama_version},
    {"/api/tags",         ROUTES_READ, ROUTES_BODY_NONE,  BROWSER_READS,   OLLAMA_ERR, false, ollama_tags},
    {"/api/ps",           ROUTES_GET,  ROUTES_BODY_NONE,  BROWSER_READS,   OLLAMA_ERR, false, ollama_ps},
    {"/api/show",         ROUTES_POST, ROUTES_BODY_OWN,   BROWSER_JSON,    OLLAMA_ERR, false, ollama_show},
    {"/api/generate",     ROUTES_POST, ROUTES_BODY_MODEL, BROWSER_JSON,    OLLAMA_ERR, false, to_model},
    {"/api/chat",         ROUTES_POST, ROUTES_BODY_MODEL, BROWSER_JSON,    OLLAMA_ERR, false, to_model},
    {"/api/embed",        ROUTES_POST, ROUTES_BODY_MODEL, BROWSER_JSON,    OLLAMA_ERR, false, to_model},
    {"/api/embeddings",   ROUTES_POST, ROUTES_BODY_MODEL, BROWSER_JSON,    OLLAMA_ERR, false, to_model},
    {"/api/pull",         ROUTES_ANY,  ROUTES_BODY_NONE,  BROWSER_JSON,    OLLAMA_ERR, false, not_here,
     "vram serve does not download models: it serves what is on this machine. Get it with Ollama "
     "(ollama pull NAME: vram fit and discover = ollama read Ollama's store) or hf download, then "
     "serve it (discover = all in vram.conf, or a [model] section); vram fit NAME says whether it "
     "fits"},
    {"/api/push",         ROUTES_ANY,  ROUTES_BODY_NONE,  BROWSER_JSON,    OLLAMA_ERR, false, not_here,
     "vram serve uploads no models: push from Ollama (ollama push NAME)"},
    {"/api/create",       ROUTES_ANY,  ROUTES_BODY_NONE,  BROWSER_JSON,    OLLAMA_ERR, false, not_here,
     "vram serve makes no models: a [model NAME] section in vram.conf serves a file as NAME "
     "(command, file =); or create it with Ollama and serve Ollama's store (discover = ollama)"},
    {"/api/copy",         ROUTES_ANY,  ROUTES_BODY_NONE,  BROWSER_JSON,    OLLAMA_ERR, false, not_here,
     "vram serve copies no models: another name for one is aliases = NAME in its [model] section "
     "of vram.conf"},
    {"/api/delete",       ROUTES_ANY,  ROUTES_BODY_NONE,  BROWSER_JSON,    OLLAMA_ERR, false, not_here,
     "vram serve deletes no models: remove one where it was downloaded (ollama rm NAME, hf cache "
     "delete); vram unload NAME stops one that runs"},
    {"/api/blobs/*",      ROUTES_ANY,  ROUTES_BODY_NONE,  BROWSER_JSON,    OLLAMA_ERR, false, not_here,
     "vram serve takes no blobs: they are for /api/create, which it does not do (a [model NAME] "
     "section in vram.conf serves a file)"},
    {"/api/*",            ROUTES_ANY,  ROUTES_BODY_NONE,  BROWSER_JSON,    OLLAMA_ERR, false, no_route},
    /* a model's own routes, by its name in the path */
    {"/m/*",              ROUTES_ANY,  ROUTES_BODY_OWN,   BROWSER_BACKEND, OPENAI_ERR, false, to_model},
};
/* clang-format on */
const size_t routes_n = sizeof routes_table / sizeof routes_table[0];

/* ---- lookups ---- */

/* Whether path (len bytes) is pat, or under it (pat ending in '*'): read
 * once, up to the first byte that differs, as most rows do at once (every
 * request looks through the rows). */
static bool matches(const char *pat, const char *path, size_t len)
{
    size_t i = 0;
    for (; pat[i] && pat[i] != '*'; i++)
        if (i == len || pat[i] != path[i])
            return false;
    return pat[i] == '*' || i == len;
}

const struct route *routes_find(const char *path, size_t len)
{
    for (size_t i = 0; i < routes_n; i++)
        if (matches(routes_table[i].path, path, len))
            return &routes_table[i];
    return NULL;
}

enum browser_rule routes_browser(const char *uri)
{
    const struct route *rt = routes_find(uri, strcspn(uri, "?"));
    return rt ? rt->browser : BROWSER_READS;
}

enum errbody_dialect routes_dialect(const char *uri)
{
    const struct route *rt = routes_find(uri, strcspn(uri, "?"));
    return rt ? rt->dialect : ERRBODY_OPENAI;
}

void routes_answer(const struct routes_ctx *x, const struct route *rt, struct front_req *r,
                   const char *path)
{
    enum evhttp_cmd_type cmd = front_method(r);
    if (!rt) {
        front_error(r, ERRBODY_NO_ROUTE, NO_ROUTE, 0);
        return;
    }
    if (cmd & rt->methods) {
        rt->answer(x, rt, r, path);
        return;
    }
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{EVHTTP_REQ_GET, "GET"},       {EVHTTP_REQ_HEAD, "HEAD"},
                 {EVHTTP_REQ_POST, "POST"},     {EVHTTP_REQ_PUT, "PUT"},
                 {EVHTTP_REQ_DELETE, "DELETE"}, {EVHTTP_REQ_OPTIONS, "OPTIONS"},
                 {EVHTTP_REQ_PATCH, "PATCH"}};
    char allow[64] = "", msg[160];
    size_t at = 0;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (rt->methods & names[k].bit)
            at += (size_t)snprintf(allow + at, sizeof allow - at, "%s%s", at ? ", " : "",
                                   names[k].name);
    front_add_header(r, "Allow", allow);
    snprintf(msg, sizeof msg, "%.*s takes %s", (int)strcspn(rt->path, "*"), rt->path, allow);
    front_error(r, ERRBODY_METHOD, msg, 0);
}
