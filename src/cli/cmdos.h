/* cmdos: what the commands vram.exe shares with Linux's vram (status, top,
 * doctor, headless) offer and say differently on each OS: the options that
 * name Linux things (--proc-root, --sys-root, headless's --root), and the
 * help that names the OS's processes and tools. The bodies are one; what
 * each OS does below them is behind their own headers (probe/probe.h,
 * cli/served.h, top/top_os.h, cli/doctor_os.h, cli/headless_os.h). */
#ifndef VRAM_CLI_CMDOS_H
#define VRAM_CLI_CMDOS_H

#ifdef _WIN32

/* Windows has no /proc or /sys to point elsewhere */
#define CMDOS_PROCROOT_OPT(T, f, HELP)
#define CMDOS_PROCROOT_ARG ""
#define CMDOS_SYSROOT_OPT(T, f)
#define CMDOS_SYSROOT_ARG ""

#define CMDOS_STATUS_PROCESSES_HELP "list every process on each GPU"
#define CMDOS_STATUS_HELP                                                                          \
    "Parts: driver reserved (the driver's own), desktop / display (dwm.exe,\n"                     \
    "explorer.exe, the shell and the browsers' graphics memory), workloads\n"                      \
    "(compute processes), other, unattributed (used by no process you can see:\n"                  \
    "other users, Windows itself), free. They add up to the total.\n"                              \
    "Under WDDM the driver gives no per-process figures: they come from Windows'\n"                \
    "GPU counters (Dedicated GPU memory in Task Manager), or read n/a.\n"

#define CMDOS_TOP_HELP                                                                             \
    "Each GPU's bar splits its memory: r driver reserved, d desktop/display,\n"                    \
    "w workloads, o other, u unattributed, . free. Memory and each process's\n"                    \
    "share of the GPU are read every interval; process lists every 3 intervals.\n"                 \
    "\n"                                                                                           \
    "keys: up/down (j/k) select   s, <, > sort by a column   S reverse it\n"                       \
    "      v tree   / filter   Enter details   + / - interval   q quit\n"                          \
    "      (taskkill /PID N ends a process)\n"

#define CMDOS_DOCTOR_IDLE_HELP " (needs the driver's per-process samples, which WDDM may lack)"
#define CMDOS_DOCTOR_HELP                                                                          \
    "Looks for: VRAM held by the desktop on the NVIDIA card (dwm.exe, explorer.exe,\n"             \
    "the shell, browsers) and what vram headless on gives back, hardware-\n"                       \
    "accelerated GPU scheduling, compute processes holding memory while the GPU\n"                 \
    "does nothing (a finished training's python.exe), memory no process you can\n"                 \
    "see holds, the driver's reserve, high power at idle, compute mode.\n"                         \
    "Changes nothing: vram headless and taskkill act on what it finds.\n"

#define CMDOS_HEADLESS_OPTS(T)                                                                     \
    {"disable-device", 0, CMD_FLAG(T, disable_device),                                             \
     .help = "with on: also disable the NVIDIA display adapter, which frees all of its memory "    \
             "from the desktop, but CUDA cannot use a disabled adapter either until `vram "        \
             "headless off`"},
#define CMDOS_HEADLESS_ARGS "[--disable-device]"
#define CMDOS_HEADLESS_INTRO                                                                       \
    "  status            the display adapters and hardware-accelerated GPU scheduling\n"           \
    "                    (the default)\n"                                                          \
    "  on                turn on hardware-accelerated GPU scheduling (HwSchMode = 2)\n"            \
    "  off               put back what `on` changed\n"
#define CMDOS_HEADLESS_HELP                                                                        \
    "Plug the monitor into the motherboard first. Changes take effect after a\n"                   \
    "restart; on and off need an Administrator prompt.\n"

#else

#define CMDOS_PROCROOT_OPT(T, f, HELP)                                                             \
    {"proc-root", 0, CMD_STRING(T, f), .arg = "DIR", .help = HELP},
#define CMDOS_PROCROOT_ARG " [--proc-root DIR]"
#define CMDOS_SYSROOT_OPT(T, f)                                                                    \
    {"sys-root", 0, CMD_STRING(T, f), .arg = "DIR", .help = "read devices from DIR instead of /sys"},
#define CMDOS_SYSROOT_ARG " [--sys-root DIR]"

#define CMDOS_STATUS_PROCESSES_HELP                                                                \
    "list every process on each GPU, those that hold /dev/nvidia* with no memory "                 \
    "too (found by a scan of every process's descriptors: milliseconds a thousand)"
#define CMDOS_STATUS_HELP                                                                          \
    "Parts: driver reserved (the driver's own), desktop / display (X, Wayland\n"                   \
    "compositors and graphics clients), workloads (compute processes), other,\n"                   \
    "unattributed (used by no process you can see: other users, containers,\n"                     \
    "leaks), free. They add up to the total.\n"

#define CMDOS_TOP_HELP                                                                             \
    "Each GPU's bar splits its memory: r driver reserved, d desktop/display,\n"                    \
    "w workloads, o other, u unattributed, . free; beside it, the used memory\n"                   \
    "over the last samples. Under it, when the screen has room: the parts in\n"                    \
    "figures, then utilization and memory bandwidth (with their graphs),\n"                        \
    "temperature, power against its limit, clocks, PCIe throughput, the video\n"                   \
    "engines. Per process: VRAM, its share of the SMs (SM%), of the memory\n"                      \
    "bandwidth (MBW%), encoder and decoder, CPU %, host memory (RSS), running\n"                   \
    "time. Memory and shares are read every interval; process lists every 3\n"                     \
    "intervals; /proc/*/fd, modes and links every 10 s, to leave the driver alone.\n"              \
    "\n"                                                                                           \
    "keys: up/down (j/k) select   s, <, > sort by a column   S reverse it\n"                       \
    "      v tree   / filter   Enter details   p suspend   r resume\n"                             \
    "      x stop (asks y/n; a model of vram serve is unloaded)   t TERM   K KILL\n"               \
    "      (asks y/n; your own processes only unless root, as vram suspend and kill)\n"            \
    "      + / - interval   ? or h help   q quit\n"

#define CMDOS_DOCTOR_IDLE_HELP ""
#define CMDOS_DOCTOR_HELP                                                                          \
    "Looks for: VRAM held by the desktop (and whether another GPU could drive\n"                   \
    "it), the driver's reserve, memory no visible process holds, defunct and\n"                    \
    "stopped processes holding memory, high power at idle, persistence mode,\n"                    \
    "compute mode, MIG, an MPS daemon. Changes nothing: vram reclaim and\n"                        \
    "vram headless act on what it finds.\n"

#define CMDOS_HEADLESS_OPTS(T)                                                                     \
    {"show", 's', CMD_FLAG(T, show), .help = "print the files `on` would write"},                  \
        {"root", 'r', CMD_STRING(T, root), .arg = "DIR",                                           \
         .help = "work on the tree at DIR (its sys/, proc/, etc/) instead of /"},
#define CMDOS_HEADLESS_ARGS "[--show] [--root DIR]"
#define CMDOS_HEADLESS_INTRO                                                                       \
    "  status           the GPUs, their monitors, the display servers and the GPU\n"               \
    "                   each runs on (the default)\n"                                              \
    "  on               write the configuration that moves the desktop to the\n"                   \
    "                   integrated (or another) GPU: an Xorg snippet, a udev rule\n"               \
    "                   for GNOME, the device lists of KWin and wlroots\n"                         \
    "  off              put back exactly what `on` replaced\n"
#define CMDOS_HEADLESS_HELP                                                                        \
    "The change takes effect after a reboot, with the monitor plugged into the\n"                  \
    "motherboard's output. Needs root to write under /etc.\n"

#endif

#endif
