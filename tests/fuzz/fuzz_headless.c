/* Fuzz target: the texts `vram headless` reads from a root it does not
 * control: xorg.conf, and its own record under var/lib/vram/headless (which
 * anyone with root may have edited). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/headless.h"
#include "host/rootfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    headless_xorg_names_nvidia(text, size);
    char err[256];
    int n = rootfs_parse(text, size, err, sizeof err);
    if (n < -1 || n > 64 || strnlen(err, sizeof err) == sizeof err)
        abort();
    char pci[32], busid[32];
    size_t k = size < sizeof pci - 1 ? size : sizeof pci - 1;
    memcpy(pci, data, k);
    pci[k] = '\0';
    if (headless_xorg_busid(pci, busid, sizeof busid) == 0 && strncmp(busid, "PCI:", 4))
        abort();
    return 0;
}
