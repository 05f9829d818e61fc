/* uikey: vram ui's key and the sessions it is exchanged for.
 *
 * The file is written whole under a name of its own (mkstemp: 0600, a
 * name nobody could take first) and renamed into place, so that a reader
 * never sees half of it and a link left at its name is replaced, never
 * followed. It gets the socket's group, readable, only when that group is
 * vram (the socket's people, docs/security.md); else only the daemon's
 * user reads it. */
#include "proxy/uikey.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/paths.h"
#include "proxy/browser.h"
#include "http/front.h"

#define HEX      64 /* 32 random bytes */
#define SESSIONS 16 /* the oldest goes when a 17th begins */

struct session {
    char cookie[HEX + 1], page[HEX + 1];
};

struct uikey {
    char path[PATHS_MAX + 8];
    char key[HEX + 1];
    char cookie_name[32]; /* vram_ui_PORT: one per address, so that two daemons keep theirs */
    struct session s[SESSIONS];
    unsigned next;
    dev_t dev;
    ino_t ino;
};

static int random_hex(char out[HEX + 1])
{
    unsigned char b[HEX / 2];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
    return 0;
}

/* a == b for HEX characters, in a time that does not depend on them */
static bool same(const char *a, size_t an, const char *b)
{
    unsigned char diff = an != HEX;
    for (size_t i = 0; i < HEX; i++)
        diff |= (unsigned char)((i < an ? a[i] : 0) ^ b[i]);
    return diff == 0;
}

struct uikey *uikey_new(const char *socket, const char *host, unsigned port, char *err,
                        size_t len)
{
    struct uikey *k = calloc(1, sizeof *k);
    if (!k) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    snprintf(k->path, sizeof k->path, "%s" PATHS_UI_SUFFIX, socket);
    snprintf(k->cookie_name, sizeof k->cookie_name, "vram_ui_%u", port);
    char tmp[sizeof k->path + 16];
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", k->path);
    int fd = -1;
    if (random_hex(k->key) < 0 || (fd = mkstemp(tmp)) < 0) {
        snprintf(err, len, "%s: %s", k->path, strerror(errno));
        free(k);
        return NULL;
    }
    /* the address a browser on this machine reaches: 0.0.0.0 is every one */
    char url[256];
    int n = snprintf(url, sizeof url, "http://%s:%u/ui?key=%s\n",
                     strcmp(host, "0.0.0.0") ? host : "127.0.0.1", port, k->key);
    struct stat st;
    struct group *g = getgrnam("vram");
    if (g && stat(socket, &st) == 0 && st.st_gid == g->gr_gid &&
        fchown(fd, (uid_t)-1, g->gr_gid) == 0)
        fchmod(fd, 0640);
    bool ok = n > 0 && write(fd, url, (size_t)n) == n && fstat(fd, &st) == 0;
    if (close(fd) < 0 || !ok || rename(tmp, k->path) < 0) {
        snprintf(err, len, "%s: %s", k->path, strerror(errno));
        unlink(tmp);
        free(k);
        return NULL;
    }
    k->dev = st.st_dev;
    k->ino = st.st_ino;
    return k;
}

/* The value of parameter name (n bytes) in query: its start and length. */
static const char *param(const char *query, const char *name, size_t *len)
{
    size_t n = strlen(name);
    for (const char *p = query; p && *p; p += strcspn(p, "&")) {
        p += *p == '&';
        if (!strncmp(p, name, n) && p[n] == '=') {
            *len = strcspn(p + n + 1, "&#");
            return p + n + 1;
        }
    }
    return NULL;
}

bool uikey_exchange(struct uikey *k, struct front_req *r, const char *path, const char *query)
{
    size_t n;
    const char *given = k && query ? param(query, "key", &n) : NULL;
    if (!given || (strcmp(path, "/ui") && strcmp(path, "/ui/")))
        return false;
    if (!same(given, n, k->key)) {
        front_error(r, ERRBODY_FORBIDDEN,
                    "this is not the dashboard's key (a new one is made at each start of vram "
                    "serve): run vram ui again",
                    0);
        return true;
    }
    struct session *s = &k->s[k->next++ % SESSIONS];
    if (random_hex(s->cookie) < 0 || random_hex(s->page) < 0) {
        memset(s, 0, sizeof *s);
        front_error(r, ERRBODY_INTERNAL, "no random numbers for a session", 0);
        return true;
    }
    char cookie[160], where[96];
    snprintf(cookie, sizeof cookie, "%s=%s; HttpOnly; SameSite=Strict; Path=/", k->cookie_name,
             s->cookie);
    /* the page's half in the fragment: the browser keeps it, never sends it */
    snprintf(where, sizeof where, "/ui#session=%s", s->page);
    const char *names[] = {"Set-Cookie", "Location", "Cache-Control", "Referrer-Policy"};
    const char *values[] = {cookie, where, "no-store", "no-referrer"};
    front_reply(r, 303, names, values, 4, "", 0);
    return true;
}

bool uikey_session(const struct uikey *k, const struct front_req *r)
{
    const char *cookies = k ? front_header(r, "Cookie") : NULL;
    const char *page = cookies ? front_header(r, "X-Vram-Session") : NULL;
    if (!page || (front_header(r, "Origin") && !browser_same_origin(r)))
        return false;
    const char *c = NULL;
    size_t nl = strlen(k->cookie_name), cl = 0;
    for (const char *p = cookies; *p; p += strcspn(p, ";")) {
        p += strspn(p, "; ");
        if (!strncmp(p, k->cookie_name, nl) && p[nl] == '=') {
            c = p + nl + 1;
            cl = strcspn(c, "; ");
            break;
        }
    }
    if (!c)
        return false;
    bool ok = false;
    for (unsigned i = 0; i < SESSIONS; i++)
        ok |= (k->s[i].cookie[0] != '\0') & same(c, cl, k->s[i].cookie) &
              same(page, strlen(page), k->s[i].page);
    return ok;
}

void uikey_strip(const char *cookie, char *out, size_t len)
{
    size_t at = 0;
    if (!len)
        return;
    for (const char *p = cookie; *p;) {
        p += strspn(p, "; ");
        size_t n = strcspn(p, ";");
        if (n && strncmp(p, "vram_ui_", 8) && at + (at ? 2 : 0) + n < len) {
            if (at) {
                memcpy(out + at, "; ", 2);
                at += 2;
            }
            memcpy(out + at, p, n);
            at += n;
        }
        p += n;
    }
    out[at] = '\0';
}

void uikey_remove(struct uikey *k)
{
    struct stat st;
    if (k && lstat(k->path, &st) == 0 && st.st_dev == k->dev && st.st_ino == k->ino)
        unlink(k->path);
}
