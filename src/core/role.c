/* role: what a GPU process is for.
 *
 * Display processes are the "display tax": the X server, Wayland compositors,
 * Windows' desktop window manager, and any client that only draws (a browser
 * with hardware acceleration, a video player). Compute processes are
 * workloads. A process that only holds the device files open (found by the
 * /proc scan) is "other" unless a rule names it. To teach vram a new
 * compositor, add a line to the table. */
#include "core/role.h"

#include <string.h>
#include <strings.h>

enum match { EXACT, PREFIX };

static const struct {
    const char *name;
    enum match how;
    enum snap_role role;
} rules[] = {
    /* X11 servers */
    {"Xorg", EXACT, SNAP_ROLE_DISPLAY},
    {"X", EXACT, SNAP_ROLE_DISPLAY},
    {"Xwayland", EXACT, SNAP_ROLE_DISPLAY},
    {"Xvnc", EXACT, SNAP_ROLE_DISPLAY},
    /* Wayland compositors and desktop shells */
    {"gnome-shell", EXACT, SNAP_ROLE_DISPLAY},
    {"mutter", EXACT, SNAP_ROLE_DISPLAY},
    {"kwin_wayland", EXACT, SNAP_ROLE_DISPLAY},
    {"kwin_x11", EXACT, SNAP_ROLE_DISPLAY},
    {"plasmashell", EXACT, SNAP_ROLE_DISPLAY},
    {"sway", EXACT, SNAP_ROLE_DISPLAY},
    {"Hyprland", EXACT, SNAP_ROLE_DISPLAY},
    {"weston", EXACT, SNAP_ROLE_DISPLAY},
    {"cosmic-comp", EXACT, SNAP_ROLE_DISPLAY},
    {"wayfire", EXACT, SNAP_ROLE_DISPLAY},
    {"labwc", EXACT, SNAP_ROLE_DISPLAY},
    {"niri", EXACT, SNAP_ROLE_DISPLAY},
    {"gamescope", EXACT, SNAP_ROLE_DISPLAY},
    {"cinnamon", EXACT, SNAP_ROLE_DISPLAY},
    {"xfwm4", EXACT, SNAP_ROLE_DISPLAY},
    {"compiz", EXACT, SNAP_ROLE_DISPLAY},
    {"picom", EXACT, SNAP_ROLE_DISPLAY},
    /* Windows: the desktop window manager and its helpers */
    {"dwm.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"csrss.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"explorer.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"NVDisplay.Container.exe", EXACT, SNAP_ROLE_DISPLAY},
    /* the Windows shell's own processes: WDDM lists every process that
     * draws as compute+graphics, so the name, not the type, says desktop */
    {"ShellExperienceHost.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"StartMenuExperienceHost.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"SearchHost.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"SearchApp.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"TextInputHost.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"ApplicationFrameHost.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"LockApp.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"Widgets.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"WidgetService.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"PhoneExperienceHost.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"SystemSettings.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"NVIDIA Overlay.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"NVIDIA app.exe", EXACT, SNAP_ROLE_DISPLAY},
    /* browsers and the web views apps embed: graphics memory for pages */
    {"msedge.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"msedgewebview2.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"chrome.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"firefox.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"brave.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"opera.exe", EXACT, SNAP_ROLE_DISPLAY},
    {"vivaldi.exe", EXACT, SNAP_ROLE_DISPLAY},
    /* driver helpers that hold the device but are not a job */
    {"nvidia-persistenced", EXACT, SNAP_ROLE_OTHER},
    {"nvidia-cuda-mps-server", EXACT, SNAP_ROLE_OTHER},
    {"nvidia-cuda-mps-control", EXACT, SNAP_ROLE_OTHER},
};

static bool rule_matches(size_t i, const char *name)
{
    size_t n = strlen(rules[i].name);
    if (rules[i].how == PREFIX)
        return strncmp(name, rules[i].name, n) == 0;
    /* Windows names are case-insensitive */
    if (n > 4 && strcmp(rules[i].name + n - 4, ".exe") == 0)
        return strcasecmp(name, rules[i].name) == 0;
    return strcmp(name, rules[i].name) == 0;
}

const char *role_base(const char *path)
{
    /* Windows paths use either separator: NVML names C:\Windows\System32\dwm.exe */
    const char *slash = strrchr(path, '/'), *back = strrchr(path, '\\');
    const char *sep = !slash ? back : !back ? slash : slash > back ? slash : back;
    return sep ? sep + 1 : path;
}

enum snap_role role_of(const char *name, unsigned types)
{
    if (name && *name) {
        const char *base = role_base(name);
        for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
            if (rule_matches(i, base))
                return rules[i].role;
    }
    if (types & (SNAP_PT_COMPUTE | SNAP_PT_MPS))
        return SNAP_ROLE_WORKLOAD;
    if (types & SNAP_PT_GRAPHICS)
        return SNAP_ROLE_DISPLAY;
    return SNAP_ROLE_OTHER;
}

const char *role_name(enum snap_role r)
{
    switch (r) {
    case SNAP_ROLE_DISPLAY:
        return "display";
    case SNAP_ROLE_WORKLOAD:
        return "workload";
    default:
        return "other";
    }
}
