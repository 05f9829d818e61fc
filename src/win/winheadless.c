/* winheadless: `vram headless status|on|off` on Windows, below the command
 * (cli/headless_os.h). The display adapters come from SetupAPI, the
 * settings from the registry (winstate.c), and disabling an adapter is left
 * to pnputil, as an administrator would do it. */
#include "win/winheadless.h"

#include <windows.h>

#include <initguid.h> /* before devguid.h: defines the GUIDs here */

#include <devguid.h>
#include <setupapi.h>
#include <stdio.h>
#include <string.h>

#include "core/headless.h"
#include "core/headless_win.h"
#include "win/winstate.h"

static void scan(struct hw_state *s)
{
    memset(s, 0, sizeof *s);
    s->hwsch = winstate_hwsch(&winstate_machine);
    HDEVINFO h = SetupDiGetClassDevsA(&GUID_DEVCLASS_DISPLAY, NULL, NULL, DIGCF_PRESENT);
    if (h == INVALID_HANDLE_VALUE)
        return;
    SP_DEVINFO_DATA d;
    d.cbSize = sizeof d;
    for (DWORD i = 0; s->nadapters < HW_MAX_ADAPTERS && SetupDiEnumDeviceInfo(h, i, &d); i++) {
        struct hw_adapter *a = &s->adapters[s->nadapters];
        if (!SetupDiGetDeviceInstanceIdA(h, &d, a->id, sizeof a->id, NULL))
            continue;
        a->vendor = headless_win_vendor(a->id);
        s->nadapters++;
    }
    SetupDiDestroyDeviceInfoList(h);
}

static const char *hwsch_name(long v)
{
    return v < 0 ? "not set (Windows' default)" : v == 2 ? "on (2)" : v == 1 ? "off (1)" : "other";
}

/* Runs pnputil with verb on id; 0 when it says so. */
static int pnputil(const char *verb, const char *id)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "pnputil %s \"%s\"", verb, id);
    STARTUPINFOA si;
    PROCESS_INFORMATION pi;
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    if (!CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
        return -1;
    WaitForSingleObject(pi.hProcess, INFINITE);
    DWORD code = 1;
    GetExitCodeProcess(pi.hProcess, &code);
    CloseHandle(pi.hProcess);
    CloseHandle(pi.hThread);
    return code == 0 ? 0 : -1;
}

static void enable_one(const char *id, void *arg)
{
    int *failed = arg;
    if (pnputil("/enable-device", id) < 0) {
        fprintf(stderr,
                "vram headless off: pnputil /enable-device \"%s\" failed: enable it in "
                "Device Manager\n",
                id);
        (*failed)++;
    } else {
        printf("enabled %s\n", id);
    }
}

static void list_one(const char *id, void *arg)
{
    (void)arg;
    printf("  enable %s (pnputil /enable-device)\n", id);
}

static int show_status(void)
{
    struct hw_state s;
    scan(&s);
    printf("display adapters:\n");
    for (size_t i = 0; i < s.nadapters; i++)
        printf("  %-7s %s\n", headless_vendor_name(s.adapters[i].vendor), s.adapters[i].id);
    if (!s.nadapters)
        printf("  none found\n");
    printf("hardware-accelerated GPU scheduling: %s\n", hwsch_name(s.hwsch));
    printf("headless: %s\n",
           winstate_applied(&winstate_machine) ? "on (vram headless off undoes it)" : "off");
    return 0;
}

static int turn_on(bool yes, bool disable)
{
    if (winstate_applied(&winstate_machine)) {
        printf("headless is already on: nothing to do (vram headless off undoes it)\n");
        return 0;
    }
    struct hw_state s;
    struct hw_plan p;
    char why[512];
    scan(&s);
    if (headless_win_plan(&s, disable, &p, why, sizeof why) < 0) {
        fprintf(stderr, "vram headless on: %s\n", why);
        return 1;
    }
    printf("the desktop stays on %s; the NVIDIA card is left to compute.\n",
           s.adapters[p.display].id);
    if (p.set_hwsch)
        printf("  set HKLM\\%s\\HwSchMode to 2 (now %s)\n", winstate_machine.graphics,
               hwsch_name(s.hwsch));
    for (size_t i = 0; i < p.ndisable; i++)
        printf("  disable %s (pnputil /disable-device): CUDA cannot use it until `off`\n",
               p.disable[i]);
    if (!yes) {
        printf("dry run: nothing changed; add --yes to do it (as Administrator)\n");
        return 0;
    }
    if (p.set_hwsch && winstate_set_hwsch(&winstate_machine, HW_HWSCH_ON, why, sizeof why) < 0) {
        fprintf(stderr, "vram headless on: %s; nothing was changed\n", why);
        return 1;
    }
    for (size_t i = 0; i < p.ndisable; i++) {
        if (winstate_note_disabled(&winstate_machine, p.disable[i], why, sizeof why) < 0 ||
            pnputil("/disable-device", p.disable[i]) < 0) {
            fprintf(stderr, "vram headless on: could not disable %s; undoing\n", p.disable[i]);
            int failed = 0;
            winstate_each_disabled(&winstate_machine, enable_one, &failed);
            winstate_restore(&winstate_machine, why, sizeof why);
            return 1;
        }
    }
    printf("done. Restart Windows for it to take effect.\n");
    return 0;
}

static int turn_off(bool yes)
{
    if (!winstate_applied(&winstate_machine)) {
        printf("headless is not on: nothing to restore\n");
        return 0;
    }
    printf("restoring the setup from before `vram headless on`:\n");
    printf("  HwSchMode back to its previous value\n");
    winstate_each_disabled(&winstate_machine, list_one, NULL);
    if (!yes) {
        printf("dry run: nothing changed; add --yes to do it (as Administrator)\n");
        return 0;
    }
    int failed = 0;
    winstate_each_disabled(&winstate_machine, enable_one, &failed);
    char err[512];
    if (failed || winstate_restore(&winstate_machine, err, sizeof err) < 0) {
        if (!failed)
            fprintf(stderr, "vram headless off: %s\n", err);
        return 1;
    }
    printf("done. Restart Windows for it to take effect.\n");
    return 0;
}

void winheadless_scan(struct hw_state *s)
{
    scan(s);
}

int headless_os_check(const char *verb, const struct headless_opts *o, char *why, size_t len)
{
    if (o->disable_device && strcmp(verb, "on")) {
        snprintf(why, len, "--disable-device goes with on");
        return -1;
    }
    return 0;
}

int headless_os_run(const char *verb, const struct headless_opts *o)
{
    if (!strcmp(verb, "on"))
        return turn_on(o->yes, o->disable_device);
    return !strcmp(verb, "off") ? turn_off(o->yes) : show_status();
}
