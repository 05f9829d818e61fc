/* modeldir: the folder a model's files are in, and how they are opened: a
 * folder the user named (its paths used as they are), or a folder inside a
 * model store, whose files are resolved beneath the store's root so that
 * nothing outside the store is read (model/storepath.c). */
#ifndef VRAM_MODEL_MODELDIR_H
#define VRAM_MODEL_MODELDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/reader.h"

struct modeldir {
    int root;          /* the store's root folder, held open; -1: plain paths */
    char dir[4096];    /* the model's folder: relative to root, or a path */
    char shown[4096];  /* the folder as messages name it */
};

/* A folder named by the user. */
void modeldir_plain(struct modeldir *d, const char *dir);

/* A folder beneath a store's root (root stays the caller's). */
void modeldir_beneath(struct modeldir *d, int root, const char *root_shown, const char *dir);

/* Opens file (a name in the folder) into r, a regular file or refused:
 * VRAM_EINPUT with "FOLDER/FILE: why". */
int modeldir_open(const struct modeldir *d, const char *file, struct reader *r, char *err,
                  size_t errlen);

/* Whether the folder has an entry of that name (a dangling link, a FIFO or
 * a link out of the store too: reading it then says what is wrong). */
bool modeldir_has(const struct modeldir *d, const char *file);

/* The size of file (a regular file) in the folder; -1 when it is not one. */
int modeldir_size(const struct modeldir *d, const char *file, uint64_t *bytes);

/* Calls each for every name in the folder (not "." and ".."), until it
 * returns non-zero, which is returned. VRAM_EINPUT when the folder cannot
 * be opened. */
int modeldir_each(const struct modeldir *d, int (*each)(const char *name, void *arg), void *arg,
                  char *err, size_t errlen);

/* Opens file, runs parse on it with "FOLDER/FILE" as its name, closes it. */
int modeldir_parse(const struct modeldir *d, const char *file,
                   int (*parse)(struct reader *r, const char *name, void *arg), void *arg,
                   char *err, size_t errlen);

#endif
