/* rootat: acting on a place beneath a root that another user may control
 * (`vram headless --root DIR`): the folder holding a path, opened with no
 * link followed (host/beneath.c), and every change made relative to it;
 * what a file holds (its SHA-256); whose a file is and whether to believe
 * it. host/rootfs.c builds its record and its undo on these. */
#ifndef VRAM_HOST_ROOTAT_H
#define VRAM_HOST_ROOTAT_H

#include <sha2.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#define ROOTAT_MAX_REL    200                               /* a relative path's length */
#define ROOTAT_HASH_LEN   (SHA256_DIGEST_STRING_LENGTH - 1) /* SHA-256 in hex */
#define ROOTAT_MAX_HASHED (64 << 20) /* a configuration file is far smaller */

/* The root, a folder descriptor; -1 with errno. */
int rootat_open_root(const char *root);

/* The folder holding rel, opened beneath root with no link followed;
 * *name is rel's last component. -1 with errno (ELOOP: a link on the way). */
int rootat_parent(int root, const char *rel, const char **name);

/* lstat of rel beneath root. */
int rootat_lstat(int root, const char *rel, struct stat *st);
bool rootat_exists(int root, const char *rel);

/* "cannot WHAT ROOT/REL: why" for errno e, a link on the way said so. */
void rootat_why(const char *root, const char *rel, int e, const char *what, char *err, size_t len);

/* Owned by root or by this process's user, and writable by no one else. */
bool rootat_trusted(const struct stat *st);

/* Why st, at rel, is not believed, and the fix. */
void rootat_untrusted(const char *root, const char *rel, const struct stat *st, char *err,
                      size_t len);

/* The SHA-256 (hex) of a regular file's bytes, or of a link's target (a
 * link is moved, never followed), at name in dir or rel beneath root. -1
 * with errno: EINVAL with its type in *kind (a FIFO, a device, a folder:
 * never opened), EFBIG past ROOTAT_MAX_HASHED. */
int rootat_hash_at(int dir, const char *name, char out[ROOTAT_HASH_LEN + 1], mode_t *kind);
int rootat_hash(int root, const char *rel, char out[ROOTAT_HASH_LEN + 1], mode_t *kind);
void rootat_hash_text(const char *content, char out[ROOTAT_HASH_LEN + 1]);

/* content as rel's file (0644): a new file beside it renamed over it, so
 * a reader never sees half of it; never opened through a link. 0 or -1
 * with errno. */
int rootat_write(int root, const char *rel, const char *content);

/* Renames from to to, both beneath root. 0 or -1 with errno. */
int rootat_move(int root, const char *from, const char *to);

#endif
