/* winstate: Windows registry changes that `vram headless off` can undo:
 * the previous HwSchMode (or its absence) and the adapters vram disabled,
 * kept under a state key. Key paths are parameters so that tests run
 * against HKEY_CURRENT_USER instead of the machine's configuration. */
#ifndef VRAM_WIN_WINSTATE_H
#define VRAM_WIN_WINSTATE_H

#include <windows.h>

#include <stdbool.h>
#include <stddef.h>

struct winstate_keys {
    HKEY root;            /* HKEY_LOCAL_MACHINE in the product */
    const char *graphics; /* SYSTEM\CurrentControlSet\Control\GraphicsDrivers */
    const char *state;    /* SOFTWARE\vram\headless */
};

extern const struct winstate_keys winstate_machine;

/* HwSchMode, -1 when absent. */
long winstate_hwsch(const struct winstate_keys *k);

/* Whether a record of `on` exists. */
bool winstate_applied(const struct winstate_keys *k);

/* Records the present HwSchMode, then sets it to value. Returns 0, or -1
 * with err (ERROR_ACCESS_DENIED: "run as Administrator"). */
int winstate_set_hwsch(const struct winstate_keys *k, DWORD value, char *err, size_t len);

/* Adds a disabled adapter's id to the record. */
int winstate_note_disabled(const struct winstate_keys *k, const char *id, char *err, size_t len);

/* The adapters the record says vram disabled, one per call to fn. */
void winstate_each_disabled(const struct winstate_keys *k, void (*fn)(const char *id, void *arg),
                            void *arg);

/* Puts HwSchMode back as recorded (deleting it if it was absent) and
 * removes the record. */
int winstate_restore(const struct winstate_keys *k, char *err, size_t len);

#endif
