/* headless's plan on hand-made systems: which GPU takes the display, what
 * each file says, and the refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "core/headless.h"
#include "core/headless_win.h"
#include "host/rootfs.h"

static struct hl_card card(const char *name, unsigned vendor, const char *pci, const char *drv,
                           bool boot, unsigned monitors)
{
    struct hl_card c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", name);
    c.vendor = vendor;
    snprintf(c.pci, sizeof c.pci, "%s", pci);
    snprintf(c.driver, sizeof c.driver, "%s", drv);
    c.boot_vga = boot;
    c.nmonitors = monitors;
    return c;
}

static const struct hl_step *find(const struct hl_plan *p, const char *path)
{
    for (size_t i = 0; i < p->nsteps; i++)
        if (!strcmp(p->steps[i].path, path))
            return &p->steps[i];
    return NULL;
}

/* Two NVIDIA cards and an AMD iGPU in PCI domain 1: both cards get the
 * Mutter tag, Xorg gets the domain-qualified BusID. */
static void every_nvidia_card_is_ignored(void **st)
{
    (void)st;
    struct hl_system s;
    memset(&s, 0, sizeof s);
    s.cards[0] = card("card0", HL_VENDOR_NVIDIA, "0000:01:00.0", "nvidia", false, 1);
    s.cards[1] = card("card1", HL_VENDOR_NVIDIA, "0000:02:00.0", "nvidia", false, 0);
    s.cards[2] = card("card2", HL_VENDOR_AMD, "0001:0a:00.0", "amdgpu", true, 0);
    s.ncards = 3;
    struct hl_plan p;
    char why[256];
    assert_int_equal(headless_plan(&s, &p, why, sizeof why), 0);
    assert_int_equal(p.display, 2);
    const struct hl_step *x = find(&p, "etc/X11/xorg.conf.d/20-vram-headless.conf");
    assert_non_null(x);
    assert_non_null(strstr(x->content, "BusID      \"PCI:10@1:0:0\""));
    assert_non_null(strstr(x->content, "\"AutoAddGPU\" \"false\""));
    const struct hl_step *u = find(&p, "etc/udev/rules.d/61-vram-headless.rules");
    assert_non_null(strstr(u->content, "KERNELS==\"0000:01:00.0\", TAG+=\"mutter-device-ignore\""));
    assert_non_null(strstr(u->content, "KERNELS==\"0000:02:00.0\", TAG+=\"mutter-device-ignore\""));
    assert_non_null(strstr(u->content, "KERNELS==\"0001:0a:00.0\", SYMLINK+=\"dri/vram-display\""));
    assert_null(find(&p, "etc/X11/xorg.conf")); /* no nvidia xorg.conf to set aside */
    assert_non_null(strstr(p.after, "plug the monitor into the AMD GPU"));
}

/* The boot GPU wins over one with a monitor; one without a driver never
 * takes the display. */
static void which_gpu_takes_the_display(void **st)
{
    (void)st;
    struct hl_system s;
    memset(&s, 0, sizeof s);
    s.cards[0] = card("card0", HL_VENDOR_NVIDIA, "0000:01:00.0", "nvidia", false, 1);
    s.cards[1] = card("card1", HL_VENDOR_INTEL, "0000:00:02.0", "", true, 1);
    s.cards[2] = card("card2", 0x1234, "0000:03:00.0", "bochs-drm", false, 1);
    s.cards[3] = card("card3", HL_VENDOR_INTEL, "0000:00:03.0", "i915", true, 1);
    s.ncards = 4;
    s.xorg_conf_nvidia = true;
    struct hl_plan p;
    char why[256];
    assert_int_equal(headless_plan(&s, &p, why, sizeof why), 0);
    assert_int_equal(p.display, 3);
    assert_null(strstr(p.after, "plug the monitor"));
    const struct hl_step *a = find(&p, "etc/X11/xorg.conf");
    assert_non_null(a);
    assert_int_equal(a->op, HL_ASIDE);
    s.ncards = 2; /* only the NVIDIA card and a driverless iGPU */
    assert_int_equal(headless_plan(&s, &p, why, sizeof why), -1);
    assert_non_null(strstr(why, "no other GPU can take the display"));
    s.cards[0] = s.cards[3]; /* no NVIDIA card at all */
    s.ncards = 1;
    assert_int_equal(headless_plan(&s, &p, why, sizeof why), -1);
    assert_non_null(strstr(why, "no NVIDIA GPU"));
}

static void xorg_conf_reading(void **st)
{
    (void)st;
    const char *yes = "Section \"Device\"\n\tDriver  \"nvidia\"\nEndSection\n";
    const char *commented = "Section \"Device\"\n# Driver \"nvidia\"\n  Driver \"modesetting\"\n";
    const char *other = "Section \"Device\"\n  DriverX \"nvidia\"\n  Driver \"nvidia-ish\"\n";
    assert_true(headless_xorg_names_nvidia(yes, strlen(yes)));
    assert_false(headless_xorg_names_nvidia(commented, strlen(commented)));
    assert_false(headless_xorg_names_nvidia(other, strlen(other)));
    char b[32];
    assert_int_equal(headless_xorg_busid("0000:00:02.0", b, sizeof b), 0);
    assert_string_equal(b, "PCI:0:2:0");
    assert_int_equal(headless_xorg_busid("0000:c1:00.1", b, sizeof b), 0);
    assert_string_equal(b, "PCI:193:0:1");
    assert_int_equal(headless_xorg_busid("00:02.0", b, sizeof b), -1);
    assert_int_equal(headless_xorg_busid("0000:00:02.0x", b, sizeof b), -1);
    assert_int_equal(headless_xorg_busid("0000:00:20.0", b, sizeof b), -1);
}

/* The record refuses paths that leave the root and unknown lines. */
static void record_paths_stay_inside(void **st)
{
    (void)st;
    char err[256];
    const char *good = "vram-headless 1 100\nmkdir etc/environment.d\n"
                       "aside etc/X11/xorg.conf var/lib/vram/headless/backup/1\n";
    assert_int_equal(rootfs_parse(good, strlen(good), err, sizeof err), 2);
    static const char *const bad[] = {
        "vram-headless 1 100\nwrite ../etc/passwd\n",
        "vram-headless 1 100\nwrite /etc/passwd\n",
        "vram-headless 1 100\nwrite etc/../../x\n",
        "vram-headless 1 100\naside etc/X11/xorg.conf /tmp/elsewhere\n",
        "vram-headless 1 100\nchmod etc/x\n",
        "vram-headless 1 100\nwrite etc/x extra\n",
        "something else\n",
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(rootfs_parse(bad[i], strlen(bad[i]), err, sizeof err), -1);
}

/* Windows: the vendor comes from the instance id; the NVIDIA adapter is
 * disabled only when asked; a virtual adapter (VEN_0000) cannot take the
 * display. */
static void windows_plan(void **st)
{
    (void)st;
    assert_int_equal(headless_win_vendor("PCI\\VEN_10DE&DEV_2C05&SUBSYS_1\\4&2"), 0x10de);
    assert_int_equal(headless_win_vendor("PCI\\VEN_8086&DEV_A780"), 0x8086);
    assert_int_equal(headless_win_vendor("PCI\\VEN_80"), 0);
    assert_int_equal(headless_win_vendor("ROOT\\BasicDisplay"), 0);
    struct hw_state s;
    memset(&s, 0, sizeof s);
    s.hwsch = -1;
    snprintf(s.adapters[0].id, HW_ID_MAX, "PCI\\VEN_10DE&DEV_2C05\\1");
    s.adapters[0].vendor = 0x10de;
    snprintf(s.adapters[1].id, HW_ID_MAX, "PCI\\VEN_0000&DEV_0000\\0");
    s.nadapters = 2;
    struct hw_plan p;
    char why[256];
    assert_int_equal(headless_win_plan(&s, false, &p, why, sizeof why), -1);
    assert_non_null(strstr(why, "no other GPU can take the display"));
    snprintf(s.adapters[2].id, HW_ID_MAX, "PCI\\VEN_8086&DEV_A780\\3");
    s.adapters[2].vendor = 0x8086;
    s.nadapters = 3;
    assert_int_equal(headless_win_plan(&s, false, &p, why, sizeof why), 0);
    assert_int_equal(p.display, 2);
    assert_true(p.set_hwsch);
    assert_int_equal(p.ndisable, 0);
    assert_int_equal(headless_win_plan(&s, true, &p, why, sizeof why), 0);
    assert_int_equal(p.ndisable, 1);
    assert_string_equal(p.disable[0], s.adapters[0].id);
    s.hwsch = 2; /* already on, nothing to disable: nothing to do */
    assert_int_equal(headless_win_plan(&s, false, &p, why, sizeof why), -1);
    assert_non_null(strstr(why, "already on"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_nvidia_card_is_ignored),
        cmocka_unit_test(which_gpu_takes_the_display),
        cmocka_unit_test(xorg_conf_reading),
        cmocka_unit_test(record_paths_stay_inside),
        cmocka_unit_test(windows_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
