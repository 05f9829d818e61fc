/* toproxy: each operation of proxyops.h on the daemon's table. The
 * answers to the proxy's demands go to proxy_granted and proxy_refused
 * through the daemon's table of askers (demand.h), as the control API's
 * go to its own. */
#include "daemon/toproxy.h"

#include "daemon/api.h"
#include "daemon/discover.h"
#include "daemon/names.h"
#include "daemon/super.h"
#include "proxy/proxy.h"

static unsigned count(void *arg)
{
    const struct daemon *d = arg;
    return (unsigned)d->sched.nmodels;
}

static bool model(void *arg, unsigned i, struct proxyops_model *out)
{
    const struct daemon *d = arg;
    const struct sched_model *m = &d->smodels[i];
    const struct dmodel *dm = &d->dm[i];
    *out = (struct proxyops_model){
        .name = m->name,
        .cfg = &dm->cfg,
        .state = m->state,
        .port = dm->port,
        .size = m->need * (m->width ? m->width : 1),
        .out_wall_ms = dm->out_wall_ms,
    };
    return !dm->removed;
}

static uint64_t expires_wall_ms(void *arg, unsigned i)
{
    const struct daemon *d = arg;
    const struct sched_model *m = &d->smodels[i];
    uint64_t exp = schedwhen_expires(&d->sched, i);
    if (!exp) /* answering: its keep-alive starts once it is done */
        exp = m->keep_ms == SCHED_FOREVER ? SCHED_FOREVER : daemon_now_ms() + m->keep_ms;
    return exp == SCHED_FOREVER ? SCHED_FOREVER : daemon_wall_ms(exp);
}

static int find(void *arg, const char *name)
{
    return names_find(arg, name);
}

static const struct demand_ops to_proxy = {proxy_granted, proxy_refused};

static uint64_t demand(void *arg, unsigned model, uint64_t wait_ms, void *req, uint64_t *idp)
{
    char who[96];
    proxy_request_name(req, who, sizeof who);
    return daemon_demand(arg, model, true, wait_ms, &to_proxy, req, idp, who);
}

static void withdraw(void *arg, unsigned model, uint64_t id)
{
    daemon_withdraw(arg, model, id);
}

static void release(void *arg, unsigned model, bool keep_set, uint64_t keep_ms)
{
    daemon_release_keep(arg, model, keep_set, keep_ms);
}

static uint64_t held_ms(void *arg, unsigned model)
{
    return daemon_held_ms(arg, model);
}

static const char *ask_ctx(void *arg, unsigned model, const json_t *body, const char *header)
{
    return discover_ask(arg, model, body, header);
}

static void control(void *arg, struct front_req *r)
{
    const struct daemon *d = arg;
    api_serve(d->api, r, true);
}

int toproxy_listen(struct daemon *d, char *err, size_t len)
{
    const struct proxyops ops = {
        .d = d,
        .base = d->base,
        .cfg = &d->cfg,
        .count = count,
        .model = model,
        .find = find,
        .demand = demand,
        .withdraw = withdraw,
        .release = release,
        .held_ms = held_ms,
        .ask_ctx = ask_ctx,
        .expires_wall_ms = expires_wall_ms,
        .control = control,
    };
    return proxy_listen(&ops, &d->proxy, err, len);
}
