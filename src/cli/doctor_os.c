/* doctor_os: `vram doctor`'s facts on Linux: another GPU that could drive
 * the display (under /sys), the MPS control daemon (under /proc), and the
 * findings of core/doctor.c. */
#include "cli/doctor_os.h"

#include "host/sysgpu.h"

size_t doctor_os_examine(const struct snap *s, struct doc_host *host, const char *procroot,
                         const char *sysroot, struct doc_finding *out, size_t max)
{
    host->igpu = sysgpu_other_gpu(sysroot, host->igpu_name, sizeof host->igpu_name);
    host->mps_pid = sysgpu_find_process(procroot, "nvidia-cuda-mps-control");
    return doctor_examine(s, host, out, max);
}

/* Linux's per-process figures come from the driver: nothing to add. */
void doctor_os_notes(struct probe *p, FILE *out)
{
    (void)p, (void)out;
}
