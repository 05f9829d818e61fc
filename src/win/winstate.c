/* winstate: undoable registry changes for `vram headless` on Windows.
 *
 * The record is written before the change it describes, so an interrupted
 * `on` leaves something `off` can act on; restoring a value that was never
 * changed writes back what is already there. */
#include "win/winstate.h"

#include <stdio.h>
#include <string.h>

const struct winstate_keys winstate_machine = {
    HKEY_LOCAL_MACHINE,
    "SYSTEM\\CurrentControlSet\\Control\\GraphicsDrivers",
    "SOFTWARE\\vram\\headless",
};

static void say(LONG rc, const char *what, char *err, size_t len)
{
    if (rc == ERROR_ACCESS_DENIED)
        snprintf(err, len, "%s: access denied: run it as Administrator", what);
    else
        snprintf(err, len, "%s: Windows error %ld", what, (long)rc);
}

long winstate_hwsch(const struct winstate_keys *k)
{
    DWORD v = 0, size = sizeof v;
    if (RegGetValueA(k->root, k->graphics, "HwSchMode", RRF_RT_REG_DWORD, NULL, &v, &size) !=
        ERROR_SUCCESS)
        return -1;
    return (long)v;
}

bool winstate_applied(const struct winstate_keys *k)
{
    DWORD v = 0, size = sizeof v;
    return RegGetValueA(k->root, k->state, "Applied", RRF_RT_REG_DWORD, NULL, &v, &size) ==
               ERROR_SUCCESS &&
           v == 1;
}

static LONG open_state(const struct winstate_keys *k, HKEY *h)
{
    return RegCreateKeyExA(k->root, k->state, 0, NULL, 0, KEY_READ | KEY_WRITE, NULL, h, NULL);
}

static LONG put_dword(HKEY h, const char *name, DWORD v)
{
    return RegSetValueExA(h, name, 0, REG_DWORD, (const BYTE *)&v, sizeof v);
}

int winstate_set_hwsch(const struct winstate_keys *k, DWORD value, char *err, size_t len)
{
    HKEY g, st;
    LONG rc = RegOpenKeyExA(k->root, k->graphics, 0, KEY_SET_VALUE, &g);
    if (rc == ERROR_FILE_NOT_FOUND)
        rc = RegCreateKeyExA(k->root, k->graphics, 0, NULL, 0, KEY_SET_VALUE, NULL, &g, NULL);
    if (rc != ERROR_SUCCESS) {
        say(rc, k->graphics, err, len);
        return -1;
    }
    if ((rc = open_state(k, &st)) != ERROR_SUCCESS) {
        RegCloseKey(g);
        say(rc, k->state, err, len);
        return -1;
    }
    long prev = winstate_hwsch(k);
    if (!winstate_applied(k)) {
        rc = put_dword(st, "PrevHwSchModeAbsent", prev < 0);
        if (rc == ERROR_SUCCESS)
            rc = put_dword(st, "PrevHwSchMode", prev < 0 ? 0 : (DWORD)prev);
        if (rc == ERROR_SUCCESS)
            rc = put_dword(st, "Applied", 1);
    }
    if (rc == ERROR_SUCCESS)
        rc = RegSetValueExA(g, "HwSchMode", 0, REG_DWORD, (const BYTE *)&value, sizeof value);
    RegCloseKey(st);
    RegCloseKey(g);
    if (rc != ERROR_SUCCESS) {
        say(rc, "HwSchMode", err, len);
        return -1;
    }
    return 0;
}

/* The record's list of disabled adapters, as a REG_MULTI_SZ block. */
static DWORD read_disabled(const struct winstate_keys *k, char *buf, DWORD size)
{
    DWORD got = size - 2;
    memset(buf, 0, size);
    if (RegGetValueA(k->root, k->state, "Disabled", RRF_RT_REG_MULTI_SZ, NULL, buf, &got) !=
        ERROR_SUCCESS)
        return 0;
    return got;
}

int winstate_note_disabled(const struct winstate_keys *k, const char *id, char *err, size_t len)
{
    char buf[4096];
    DWORD n = read_disabled(k, buf, sizeof buf);
    size_t at = 0; /* end of the list: the first empty string */
    while (at < n && buf[at])
        at += strlen(buf + at) + 1;
    size_t idl = strlen(id) + 1;
    if (at + idl + 1 > sizeof buf) {
        snprintf(err, len, "too many adapters in the record");
        return -1;
    }
    memcpy(buf + at, id, idl);
    buf[at + idl] = '\0';
    HKEY st;
    LONG rc = open_state(k, &st);
    if (rc == ERROR_SUCCESS) {
        rc = put_dword(st, "Applied", 1);
        if (rc == ERROR_SUCCESS)
            rc = RegSetValueExA(st, "Disabled", 0, REG_MULTI_SZ, (const BYTE *)buf,
                                (DWORD)(at + idl + 1));
        RegCloseKey(st);
    }
    if (rc != ERROR_SUCCESS) {
        say(rc, k->state, err, len);
        return -1;
    }
    return 0;
}

void winstate_each_disabled(const struct winstate_keys *k, void (*fn)(const char *id, void *arg),
                            void *arg)
{
    char buf[4096];
    DWORD n = read_disabled(k, buf, sizeof buf);
    for (size_t at = 0; at < n && buf[at]; at += strlen(buf + at) + 1)
        fn(buf + at, arg);
}

int winstate_restore(const struct winstate_keys *k, char *err, size_t len)
{
    DWORD absent = 0, prev = 0, size = sizeof absent;
    if (RegGetValueA(k->root, k->state, "PrevHwSchModeAbsent", RRF_RT_REG_DWORD, NULL, &absent,
                     &size) == ERROR_SUCCESS) {
        size = sizeof prev;
        RegGetValueA(k->root, k->state, "PrevHwSchMode", RRF_RT_REG_DWORD, NULL, &prev, &size);
        HKEY g;
        LONG rc = RegOpenKeyExA(k->root, k->graphics, 0, KEY_SET_VALUE, &g);
        if (rc == ERROR_SUCCESS) {
            if (absent) {
                rc = RegDeleteValueA(g, "HwSchMode");
                if (rc == ERROR_FILE_NOT_FOUND)
                    rc = ERROR_SUCCESS;
            } else {
                rc = RegSetValueExA(g, "HwSchMode", 0, REG_DWORD, (const BYTE *)&prev, sizeof prev);
            }
            RegCloseKey(g);
        }
        if (rc != ERROR_SUCCESS) {
            say(rc, "HwSchMode", err, len);
            return -1;
        }
    }
    LONG rc = RegDeleteTreeA(k->root, k->state);
    if (rc != ERROR_SUCCESS && rc != ERROR_FILE_NOT_FOUND) {
        say(rc, k->state, err, len);
        return -1;
    }
    return 0;
}
