/* modelpath: /m/NAME/REST. NAME with its '/' as %2F is one segment; with
 * its '/' as they are, the longest run of segments that names a model wins
 * ("/m/Qwen/Qwen2.5-7B/v1/chat/completions"). */
#include "proxy/modelpath.h"

#include <event2/http.h>
#include <stdlib.h>
#include <string.h>

#include "core/modelname.h"
#include "http/wbuf.h"

const char *modelpath_split(const struct proxyops *ops, const char *at, char *name, size_t len)
{
    const char *end = at + strlen(at);
    for (;;) {
        size_t n = (size_t)(end - at);
        char raw[MODELNAME_MAX * 3 + 1];
        name[0] = '\0';
        if (n < sizeof raw) {
            memcpy(raw, at, n);
            raw[n] = '\0';
            size_t dl = 0;
            char *dec = evhttp_uridecode(raw, 0, &dl);
            if (dec && dl == strlen(dec))
                wbuf_copy(name, len, dec, dl);
            free(dec);
        }
        const char *prev = end > at ? memrchr(at, '/', (size_t)(end - at)) : NULL;
        if (!prev || ops->find(ops->d, name) >= 0)
            return *end ? end : NULL;
        end = prev;
    }
}
