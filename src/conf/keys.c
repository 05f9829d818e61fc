/* keys: token =, tokens = and key files, and which key a request carries.
 *
 * The keys are hashed once (SHA-256, libmd) and a request's key is hashed
 * once per request: comparing fixed-size digests, all of them and each
 * whole, takes the same time whatever the guess, its length included, and
 * a key's name is found without a branch on any byte of it. */
#include "conf/keys.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sha2.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEYFILE_MAX (64 * 1024)

static void digest(const char *key, size_t n, unsigned char out[32])
{
    SHA2_CTX c;
    SHA256Init(&c);
    SHA256Update(&c, (const uint8_t *)key, n);
    SHA256Final(out, &c);
}

static bool good_name(const char *n, size_t len)
{
    if (!len || len >= KEYS_NAME_MAX)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)n[i]) && !strchr("-_.@", n[i]))
            return false;
    return true;
}

const char *keys_add(struct keys *ks, const char *name, const char *key)
{
    size_t kl = strlen(key);
    if (!kl || kl >= KEYS_KEY_MAX)
        return "a key has 1 to 127 characters (openssl rand -hex 32 makes one of 64)";
    for (size_t i = 0; i < kl; i++)
        if ((unsigned char)key[i] <= ' ' || key[i] == 0x7f)
            return "a key has no blanks or control characters";
    if (!good_name(name, strlen(name)))
        return "a key's name is letters, digits, '-', '_', '.', '@', up to 31";
    unsigned char d[32];
    digest(key, kl, d);
    for (unsigned i = 0; i < ks->n; i++) {
        if (!strcmp(ks->k[i].name, name))
            return "a key's name is given twice (names tell keys apart in the log)";
        if (!memcmp(ks->k[i].digest, d, sizeof d))
            return "two names have the same key (the log could not tell them apart)";
    }
    if (ks->n == KEYS_MAX)
        return "more than 64 keys";
    snprintf(ks->k[ks->n].name, sizeof ks->k[0].name, "%s", name);
    memcpy(ks->k[ks->n++].digest, d, sizeof d);
    return NULL;
}

/* One NAME:KEY entry of len bytes at e. */
static const char *add_entry(struct keys *ks, const char *e, size_t len)
{
    const char *colon = memchr(e, ':', len);
    if (!colon)
        return "each key is NAME:KEY, or a key file's path";
    char name[KEYS_NAME_MAX + 1], key[KEYS_KEY_MAX + 1];
    size_t nl = (size_t)(colon - e), kl = len - nl - 1;
    if (nl >= sizeof name || kl >= sizeof key)
        return nl >= sizeof name ? "a key's name is letters, digits, '-', '_', '.', '@', up to 31"
                                 : "a key has 1 to 127 characters";
    memcpy(name, e, nl);
    name[nl] = '\0';
    memcpy(key, colon + 1, kl);
    key[kl] = '\0';
    const char *why = keys_add(ks, name, key);
    explicit_bzero(key, sizeof key);
    return why;
}

/* A key file: only its owner (this user, or root) may read it. */
static int add_file(struct keys *ks, const char *path, char *why, size_t len)
{
    struct stat st, fst;
    if (stat(path, &st) < 0) {
        snprintf(why, len, "key file %s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) { /* never opened: a FIFO would wait, a device act */
        snprintf(why, len, "key file %s: not a regular file", path);
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0 || fstat(fd, &fst) < 0 || fst.st_ino != st.st_ino || fst.st_dev != st.st_dev ||
        !S_ISREG(fst.st_mode)) {
        snprintf(why, len, "key file %s: %s", path, fd < 0 ? strerror(errno) : "changed as read");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if ((fst.st_uid != geteuid() && fst.st_uid != 0) || (fst.st_mode & 077)) {
        snprintf(why, len,
                 "key file %s: mode %03o, uid %u: only its owner (the daemon's user or root) "
                 "may read it: chmod 600 %s",
                 path, (unsigned)(fst.st_mode & 0777), (unsigned)fst.st_uid, path);
        close(fd);
        return -1;
    }
    if (fst.st_size > KEYFILE_MAX) {
        snprintf(why, len, "key file %s: over 64 KiB: not a key file", path);
        close(fd);
        return -1;
    }
    char buf[KEYFILE_MAX + 1];
    size_t n = 0;
    for (ssize_t r; n < KEYFILE_MAX && (r = read(fd, buf + n, KEYFILE_MAX - n)) != 0;) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(why, len, "key file %s: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    unsigned line = 0;
    int rc = 0;
    for (char *l = buf, *next; l && !rc; l = next) {
        next = strchr(l, '\n');
        if (next)
            *next++ = '\0';
        line++;
        size_t ll = strlen(l);
        while (ll && (l[ll - 1] == '\r' || l[ll - 1] == ' ' || l[ll - 1] == '\t'))
            l[--ll] = '\0';
        while (*l == ' ' || *l == '\t')
            l++;
        if (!*l || *l == '#')
            continue;
        const char *bad = add_entry(ks, l, strlen(l));
        if (bad) {
            snprintf(why, len, "key file %s, line %u: %s", path, line, bad);
            rc = -1;
        }
    }
    explicit_bzero(buf, n);
    return rc;
}

int keys_parse(struct keys *ks, const char *value, char *why, size_t len)
{
    for (const char *p = value; *p;) {
        p += strspn(p, ", \t");
        size_t n = strcspn(p, ", \t");
        if (!n)
            break;
        if (*p == '/') {
            char path[512];
            if (n >= sizeof path) {
                snprintf(why, len, "a key file's path over %zu characters", sizeof path - 1);
                return -1;
            }
            memcpy(path, p, n);
            path[n] = '\0';
            if (add_file(ks, path, why, len) < 0)
                return -1;
        } else {
            const char *bad = add_entry(ks, p, n);
            if (bad) {
                snprintf(why, len, "%s", bad);
                return -1;
            }
        }
        p += n;
    }
    return 0;
}

int keys_match(const struct keys *ks, const char *h)
{
    if (!h || strncasecmp(h, "Bearer ", 7))
        return -1;
    h += 7;
    while (*h == ' ')
        h++;
    size_t n = strlen(h);
    while (n && (h[n - 1] == ' ' || h[n - 1] == '\t'))
        n--;
    unsigned char d[32];
    digest(h, n, d);
    unsigned found = 0; /* index + 1 */
    for (unsigned i = 0; i < ks->n; i++) {
        unsigned char diff = 0;
        for (size_t b = 0; b < sizeof d; b++)
            diff |= (unsigned char)(d[b] ^ ks->k[i].digest[b]);
        /* all ones when equal, else 0: no branch on the bytes */
        unsigned eq = (unsigned)((diff - 1u) >> 8) & 1u;
        found |= (0u - eq) & (i + 1);
    }
    return (int)found - 1;
}
