/* hubfetch: libcurl's easy interface by dlopen, one handle, reset before
 * each request. HTTPS only, unless HF_ENDPOINT itself is http:// (a test's
 * server on the loopback), and the same for redirects. */
#include "cli/hubfetch.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef VRAM_VERSION
#define VRAM_VERSION "0.1.0"
#endif

struct hubfetch {
    void *lib;
    CURL *h;
    CURLcode (*global_init)(long);
    CURL *(*init)(void);
    CURLcode (*setopt)(CURL *, CURLoption, ...);
    CURLcode (*perform)(CURL *);
    CURLcode (*getinfo)(CURL *, CURLINFO, ...);
    void (*reset)(CURL *);
    void (*cleanup)(CURL *);
    const char *(*strerror)(CURLcode);
    char endpoint[256]; /* no '/' at its end */
    char host[200];
    const char *protocols; /* "https", or "http,https" for an http:// endpoint */
    const char *token;
};

struct body {
    struct hubfetch *f;
    char *p;
    size_t n, cap, max;
    uint64_t skip; /* a range the server did not honour: its bytes before the range */
    bool first, capped, too_big;
    uint64_t want; /* with a range: this many at most */
};

static size_t on_data(char *data, size_t one, size_t count, void *arg)
{
    struct body *b = arg;
    size_t len = one * count, take = len;
    if (b->first) { /* 206: the range itself; 200: the whole file, from its start */
        b->first = false;
        long code = 0;
        b->f->getinfo(b->f->h, CURLINFO_RESPONSE_CODE, &code);
        if (code == 206)
            b->skip = 0;
    }
    if (b->skip) {
        size_t s = b->skip < len ? (size_t)b->skip : len;
        b->skip -= s;
        data += s;
        take -= s;
    }
    if (b->want && b->n + take > b->want) { /* all of the range is here: the rest is not read */
        take = (size_t)(b->want - b->n);
        b->capped = true;
    }
    if (b->n + take > b->max) {
        b->too_big = true;
        return 0;
    }
    if (b->n + take + 1 > b->cap) {
        size_t cap = (b->n + take + 1) * 2;
        char *p = realloc(b->p, cap > b->max + 1 ? b->max + 1 : cap);
        if (!p)
            return 0;
        b->p = p;
        b->cap = cap > b->max + 1 ? b->max + 1 : cap;
    }
    memcpy(b->p + b->n, data, take);
    b->n += take;
    b->p[b->n] = '\0';
    return b->capped ? 0 : len;
}

struct hubfetch *hubfetch_open(char *err, size_t errlen)
{
    struct hubfetch *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    const char *ep = getenv("HF_ENDPOINT");
    snprintf(f->endpoint, sizeof f->endpoint, "%s", ep && *ep ? ep : "https://huggingface.co");
    size_t el = strlen(f->endpoint);
    while (el && f->endpoint[el - 1] == '/')
        f->endpoint[--el] = '\0';
    bool https = !strncmp(f->endpoint, "https://", 8), http = !strncmp(f->endpoint, "http://", 7);
    const char *h = f->endpoint + (https ? 8 : 7);
    if ((!https && !http) || !*h || strlen(ep ? ep : "") >= sizeof f->endpoint - 1 ||
        strpbrk(h, " \t\r\n\\?#@")) {
        snprintf(err, errlen, "HF_ENDPOINT '%.200s': the hub's address, https://HOST (as "
                              "huggingface_hub takes it)",
                 ep ? ep : "");
        free(f);
        return NULL;
    }
    snprintf(f->host, sizeof f->host, "%.*s", (int)strcspn(h, "/"), h);
    f->protocols = https ? "https" : "http,https";
    f->token = getenv("HF_TOKEN");
    f->lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!f->lib) {
        snprintf(err, errlen, "vram fit --online needs libcurl (apt install libcurl4): %s",
                 dlerror());
        free(f);
        return NULL;
    }
#define SYM(field, name) *(void **)&f->field = dlsym(f->lib, name)
    SYM(global_init, "curl_global_init");
    SYM(init, "curl_easy_init");
    SYM(setopt, "curl_easy_setopt");
    SYM(perform, "curl_easy_perform");
    SYM(getinfo, "curl_easy_getinfo");
    SYM(reset, "curl_easy_reset");
    SYM(cleanup, "curl_easy_cleanup");
    SYM(strerror, "curl_easy_strerror");
#undef SYM
    if (!f->global_init || !f->init || !f->setopt || !f->perform || !f->getinfo || !f->reset ||
        !f->cleanup || !f->strerror || f->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
        !(f->h = f->init())) {
        snprintf(err, errlen, "libcurl.so.4 is not the libcurl vram knows, or cannot start");
        dlclose(f->lib);
        free(f);
        return NULL;
    }
    return f;
}

void hubfetch_close(struct hubfetch *f)
{
    if (!f)
        return;
    f->cleanup(f->h);
    dlclose(f->lib);
    free(f);
}

const char *hubfetch_host(const struct hubfetch *f)
{
    return f->host;
}

long hubfetch_get(struct hubfetch *f, const char *path, uint64_t from, uint64_t len, size_t max,
                  char **out, size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    char url[1024], range[64];
    if ((size_t)snprintf(url, sizeof url, "%s%s", f->endpoint, path) >= sizeof url) {
        snprintf(err, errlen, "%s: too long a URL", path);
        return -1;
    }
    struct body b = {.f = f, .max = len && len < max ? (size_t)len : max, .skip = len ? from : 0,
                     .first = true, .want = len};
    CURL *h = f->h;
    f->reset(h);
    f->setopt(h, CURLOPT_URL, url);
    f->setopt(h, CURLOPT_PROTOCOLS_STR, f->protocols);
    f->setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, f->protocols);
    f->setopt(h, CURLOPT_FOLLOWLOCATION, 1L); /* the files live on the hub's CDN */
    f->setopt(h, CURLOPT_MAXREDIRS, 5L);
    f->setopt(h, CURLOPT_NOSIGNAL, 1L);
    f->setopt(h, CURLOPT_CONNECTTIMEOUT, 15L);
    f->setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L); /* a stalled transfer ends, not hangs */
    f->setopt(h, CURLOPT_LOW_SPEED_TIME, 30L);
    f->setopt(h, CURLOPT_USERAGENT, "vram/" VRAM_VERSION " (vram fit --online)");
    f->setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    f->setopt(h, CURLOPT_WRITEDATA, &b);
    if (f->token && *f->token) { /* as credentials: never sent on to another host */
        f->setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
        f->setopt(h, CURLOPT_XOAUTH2_BEARER, f->token);
    }
    if (len) {
        snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)from,
                 (unsigned long long)(from + len - 1));
        f->setopt(h, CURLOPT_RANGE, range);
    }
    CURLcode rc = f->perform(h);
    long code = 0;
    f->getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && b.capped)) {
        if (b.too_big)
            snprintf(err, errlen, "%s: larger than vram reads (%zu bytes)", url, max);
        else
            snprintf(err, errlen, "%s: %s", url, f->strerror(rc));
        free(b.p);
        return -1;
    }
    if (!b.p && !(b.p = calloc(1, 1))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *out = b.p;
    *n = b.n;
    return code;
}
