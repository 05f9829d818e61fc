/* storepath: opening a path inside a model store (Ollama's, the Hugging Face
 * cache, LM Studio's folder) so that nothing outside the store is ever read:
 * symbolic links are followed only while they stay beneath the store's root,
 * ".." never climbs above it, and only regular files are opened as files. */
#ifndef VRAM_MODEL_STOREPATH_H
#define VRAM_MODEL_STOREPATH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Opens path ('/'-separated, relative) beneath the folder root (a descriptor,
 * not consumed). dir: open a folder (for listing), else a regular file.
 * The descriptor, or -1 with errno: EXDEV (it would leave the store: an
 * absolute link, or ".." above the root), ELOOP (more than 40 links),
 * EINVAL with *kind set to its type (a FIFO, a device, a socket, a folder
 * where a file was asked for: never opened), or what openat says. */
int storepath_open(int root, const char *path, int dir, mode_t *kind);

/* Calls each for every name in the folder path beneath root ("." and ".."
 * aside) until it returns non-zero, at most max names. 0 or each's value;
 * -1 with errno when the folder cannot be opened. */
int storepath_list(int root, const char *path, int (*each)(const char *name, void *arg),
                   void *arg, unsigned max);

/* The size of the regular file at path beneath root; -1 with errno (and
 * *kind, as storepath_open). */
int storepath_size(int root, const char *path, uint64_t *size, mode_t *kind);

/* A small regular file's text (at most len - 1 bytes, NUL-terminated); -1
 * with errno, EFBIG when it is longer. */
int storepath_text(int root, const char *path, char *buf, size_t len);

/* A sentence for errno from storepath_open ("leads outside the store"). */
const char *storepath_why(int err, mode_t kind);

#endif
