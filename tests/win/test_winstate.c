/* winstate under wine, against HKEY_CURRENT_USER keys of its own: on then
 * off leaves HwSchMode exactly as it was, whether it was absent or set; the
 * record survives between processes (it is read back from the registry). */
#include <stdio.h>
#include <string.h>

#include "win/winstate.h"

static int fails;

#define CHECK(cond, what)                                                                          \
    do {                                                                                           \
        int ok_ = (cond);                                                                          \
        printf("%s - %s\n", ok_ ? "ok" : "not ok", what);                                          \
        fails += !ok_;                                                                             \
    } while (0)

static void collect(const char *id, void *arg)
{
    strcat((char *)arg, id);
    strcat((char *)arg, ";");
}

int main(void)
{
    const struct winstate_keys k = {HKEY_CURRENT_USER, "Software\\vram-test\\GraphicsDrivers",
                                    "Software\\vram-test\\state"};
    char err[256];
    RegDeleteTreeA(HKEY_CURRENT_USER, "Software\\vram-test");

    CHECK(winstate_hwsch(&k) == -1, "HwSchMode starts absent");
    CHECK(!winstate_applied(&k), "no record at first");
    CHECK(winstate_set_hwsch(&k, 2, err, sizeof err) == 0, "on: sets HwSchMode");
    CHECK(winstate_hwsch(&k) == 2, "HwSchMode is 2");
    CHECK(winstate_applied(&k), "the record says on");
    CHECK(winstate_note_disabled(&k, "PCI\\VEN_10DE&DEV_2C05\\4&1", err, sizeof err) == 0 &&
              winstate_note_disabled(&k, "PCI\\VEN_10DE&DEV_2C05\\4&2", err, sizeof err) == 0,
          "disabled adapters are recorded");
    char ids[512] = "";
    winstate_each_disabled(&k, collect, ids);
    CHECK(!strcmp(ids, "PCI\\VEN_10DE&DEV_2C05\\4&1;PCI\\VEN_10DE&DEV_2C05\\4&2;"),
          "both adapters read back in order");
    if (strcmp(ids, "PCI\\VEN_10DE&DEV_2C05\\4&1;PCI\\VEN_10DE&DEV_2C05\\4&2;"))
        printf("#   got: %s\n", ids);
    CHECK(winstate_restore(&k, err, sizeof err) == 0, "off succeeds");
    CHECK(winstate_hwsch(&k) == -1, "off: HwSchMode absent again, as before");
    CHECK(!winstate_applied(&k), "off: the record is gone");

    /* a value that was there: on twice keeps the first previous value */
    HKEY g;
    DWORD one = 1;
    RegCreateKeyExA(HKEY_CURRENT_USER, k.graphics, 0, NULL, 0, KEY_WRITE, NULL, &g, NULL);
    RegSetValueExA(g, "HwSchMode", 0, REG_DWORD, (const BYTE *)&one, sizeof one);
    RegCloseKey(g);
    CHECK(winstate_set_hwsch(&k, 2, err, sizeof err) == 0 &&
              winstate_set_hwsch(&k, 2, err, sizeof err) == 0,
          "on twice");
    CHECK(winstate_restore(&k, err, sizeof err) == 0 && winstate_hwsch(&k) == 1,
          "off: HwSchMode back to 1, not to the 2 of the second on");
    RegDeleteTreeA(HKEY_CURRENT_USER, "Software\\vram-test");
    printf("%d failed\n", fails);
    return fails ? 1 : 0;
}
