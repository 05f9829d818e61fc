/* Roles: the desktop is recognised by name and by behaviour. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/role.h"

static void compositors_are_display(void **st)
{
    (void)st;
    const char *names[] = {
        "Xorg", "/usr/lib/xorg/Xorg", "Xwayland", "gnome-shell", "kwin_wayland", "mutter",
        "sway", "Hyprland",           "weston",   "dwm.exe",     "DWM.EXE",      NULL};
    for (int i = 0; names[i]; i++)
        assert_int_equal(role_of(names[i], SNAP_PT_GRAPHICS), SNAP_ROLE_DISPLAY);
    /* even if a compositor also has a compute context */
    assert_int_equal(role_of("gnome-shell", SNAP_PT_COMPUTE | SNAP_PT_GRAPHICS), SNAP_ROLE_DISPLAY);
}

static void by_behaviour(void **st)
{
    (void)st;
    assert_int_equal(role_of("python3", SNAP_PT_COMPUTE), SNAP_ROLE_WORKLOAD);
    assert_int_equal(role_of("ollama", SNAP_PT_MPS), SNAP_ROLE_WORKLOAD);
    assert_int_equal(role_of("firefox", SNAP_PT_GRAPHICS), SNAP_ROLE_DISPLAY);
    assert_int_equal(role_of("blender", SNAP_PT_COMPUTE | SNAP_PT_GRAPHICS), SNAP_ROLE_WORKLOAD);
    assert_int_equal(role_of("sleep", SNAP_PT_FD), SNAP_ROLE_OTHER);
    assert_int_equal(role_of("", SNAP_PT_FD), SNAP_ROLE_OTHER);
    assert_int_equal(role_of(NULL, SNAP_PT_COMPUTE), SNAP_ROLE_WORKLOAD);
}

static void near_names_do_not_match(void **st)
{
    (void)st;
    /* a job called "Xorg-bench" or "swayd" is not the desktop */
    assert_int_equal(role_of("Xorg-bench", SNAP_PT_COMPUTE), SNAP_ROLE_WORKLOAD);
    assert_int_equal(role_of("swayd", SNAP_PT_COMPUTE), SNAP_ROLE_WORKLOAD);
    assert_int_equal(role_of("nvidia-persistenced", SNAP_PT_FD), SNAP_ROLE_OTHER);
}

/* What NVML names on Windows: full paths with backslashes, and every
 * process that draws listed as compute+graphics. */
static void windows_paths_and_shell(void **st)
{
    (void)st;
    const unsigned cg = SNAP_PT_COMPUTE | SNAP_PT_GRAPHICS;
    assert_int_equal(role_of("C:\\Windows\\System32\\dwm.exe", cg), SNAP_ROLE_DISPLAY);
    assert_int_equal(role_of("C:\\Windows\\explorer.exe", cg), SNAP_ROLE_DISPLAY);
    assert_int_equal(role_of("C:\\Program Files (x86)\\Microsoft\\Edge\\Application\\msedge.exe", cg),
                     SNAP_ROLE_DISPLAY);
    assert_int_equal(role_of("C:\\Windows\\SystemApps\\ShellExperienceHost.exe", cg),
                     SNAP_ROLE_DISPLAY);
    /* a training run is a workload, whatever its type */
    assert_int_equal(role_of("C:\\Python312\\python.exe", cg), SNAP_ROLE_WORKLOAD);
    assert_int_equal(role_of("C:\\Python312\\python.exe", SNAP_PT_COMPUTE), SNAP_ROLE_WORKLOAD);
    assert_string_equal(role_base("C:\\a/b\\c.exe"), "c.exe");
    assert_string_equal(role_base("/usr/bin/x"), "x");
    assert_string_equal(role_base("plain"), "plain");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compositors_are_display),
        cmocka_unit_test(by_behaviour),
        cmocka_unit_test(near_names_do_not_match),
        cmocka_unit_test(windows_paths_and_shell),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
