/* windoctor: `vram doctor`'s facts on Windows (cli/doctor_os.h): the
 * display adapters (SetupAPI), HwSchMode and whether `vram headless on` was
 * applied (the registry), and the findings of core/doctor_win.c, whose
 * fixes exist on Windows; and, under the findings, why the per-process
 * figures are missing where WDDM kept them. */
#include "win/windoctor.h"

#include <stdio.h>
#include <string.h>

#include "core/doctor_win.h"
#include "core/headless.h"
#include "win/winheadless.h"
#include "win/winprobe.h"
#include "win/winstate.h"

static void windows_facts(struct doc_win *w)
{
    memset(w, 0, sizeof *w);
    struct hw_state hs;
    winheadless_scan(&hs);
    w->hwsch = hs.hwsch;
    w->hwsch_known = true;
    w->headless_on = winstate_applied(&winstate_machine);
    for (size_t i = 0; i < hs.nadapters && !w->igpu; i++) {
        unsigned v = hs.adapters[i].vendor;
        if (v && v != HL_VENDOR_NVIDIA) { /* VEN_0000: a virtual adapter, not a GPU */
            w->igpu = true;
            snprintf(w->igpu_name, sizeof w->igpu_name, "the %s adapter",
                     headless_vendor_name(v));
        }
    }
}

size_t doctor_os_examine(const struct snap *s, struct doc_host *host, const char *procroot,
                         const char *sysroot, struct doc_finding *out, size_t max)
{
    (void)procroot, (void)sysroot; /* Linux's: vram.exe offers neither */
    struct doc_win win;
    windows_facts(&win);
    return doctor_win_examine(s, host, &win, out, max);
}

void doctor_os_notes(struct probe *p, FILE *out)
{
    const char *why = winprobe_counters_why(p);
    if (why[0])
        fprintf(out, "  note: per-process figures: %s\n", why);
}
