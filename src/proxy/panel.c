/* panel: requests for the dashboard and the control API on the proxy's
 * address, checked here and handed, on the client's own connection, to
 * the control API (proxyops.control), which answers them as it answers
 * its socket's. */
#include "proxy/panel.h"

#include <stdlib.h>
#include <string.h>

#include "http/front.h"
#include "proxy/proxyops.h"

struct panel {
    const struct proxyops *ops;
};

struct panel *panel_new(const struct proxyops *ops)
{
    struct panel *pn = calloc(1, sizeof *pn);
    if (pn)
        pn->ops = ops;
    return pn;
}

bool panel_route(struct panel *pn, struct front_req *r, const char *path, bool keys_set,
                 bool authorized)
{
    bool page = !strcmp(path, "/ui") || !strncmp(path, "/ui/", 4);
    if (!page && strncmp(path, "/vram/", 6))
        return false;
    if (!page && !keys_set && !authorized) {
        front_error(r, ERRBODY_FORBIDDEN,
                    "the control API is served on this address only with a token (token = in "
                    "[serve]) or to the page vram ui opens; else use the control socket",
                    0);
        return true;
    }
    if (!page && !authorized) {
        front_error(r, ERRBODY_UNAUTHORIZED, "this address wants Authorization: Bearer TOKEN", 0);
        return true;
    }
    /* the key and the session stop here: the control API looks at neither */
    pn->ops->control(pn->ops->d, r);
    return true;
}
