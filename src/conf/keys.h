/* keys: the keys the proxy asks its clients for: `token =` (named
 * "token") and `tokens =` (named keys, written in the file or in key
 * files that only their owner may read). Each is kept as its SHA-256, so
 * that a request's key is compared with all of them whole, in a time
 * that depends on how many there are only. A request is known by its
 * key's name (in the log), never by the key. */
#ifndef VRAM_DAEMON_KEYS_H
#define VRAM_DAEMON_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#define KEYS_MAX      64
#define KEYS_NAME_MAX 32  /* a name's characters, its NUL included */
#define KEYS_KEY_MAX  128 /* a key's, the same */

struct keys {
    unsigned n;
    struct {
        char name[KEYS_NAME_MAX];
        unsigned char digest[32];
    } k[KEYS_MAX];
};

/* Adds one key under name: NULL, or what is wrong (a name given twice, a
 * key that another name has, too many). */
const char *keys_add(struct keys *ks, const char *name, const char *key);

/* Adds what a `tokens =` value lists, separated by commas or blanks: each
 * NAME:KEY, or the path (from /) of a key file of lines NAME:KEY (blank
 * lines and # comments skipped), a regular file of this user or root that
 * no one else may read or write. 0, or -1 with why. */
int keys_parse(struct keys *ks, const char *value, char *why, size_t len);

/* The key an Authorization header value carries ("Bearer KEY", the scheme
 * in any case, RFC 9110 11.1): its index, or -1 for none or a wrong one. */
int keys_match(const struct keys *ks, const char *authorization);

#endif
