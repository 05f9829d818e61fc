/* winmain: vram.exe, vram on Windows: where the desktop's VRAM went
 * (status, top), what wastes it (doctor) and the switch that frees it
 * (headless). Linux's commands and front (cli/cmd.c), with the table of
 * those that exist here, its usage, its help and the console's colours. */
#include <windows.h>

#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/color.h"
#include "core/err.h"

static int cmd_help(const void *opts, int argc, char **argv);

/* Linux's `vram help` pages the manual; vram.exe has no manual pages, so
 * it prints a command's help, which is what `COMMAND --help` prints. */
static const struct cmd_entry help_entry = {
    .name = "help",
    .args = "[COMMAND]",
    .summary = "a command's help (the same as vram COMMAND --help)",
    .help = "The manual pages (man vram-COMMAND) come with the Linux package; on Windows\n"
            "each command's help and docs/windows.md are the manual.\n",
    .max_operands = 1,
    .exec = cmd_help,
};

CMD_TABLE(&cmd_status_entry, &cmd_top_entry, &cmd_doctor_entry, &cmd_headless_entry, &help_entry);

/* Without a driver, vram.exe says the error alone: the hint Linux's
 * build adds names a command vram.exe does not have. */
int cmd_no_driver(const struct cmd_entry *e, const char *err, int rc)
{
    fprintf(stderr, "vram %s: %s\n", e->name, err);
    return err_exit_code(rc);
}

static void usage(FILE *out);

static int cmd_help(const void *opts, int argc, char **argv)
{
    (void)opts;
    if (argc < 1 || !strcmp(argv[0], "vram")) {
        usage(stdout);
        return 0;
    }
    const struct cmd_entry *e = cmd_find(argv[0]);
    if (!e)
        return cmd_bad_usage(&help_entry, "'%s' is not a command of vram.exe (vram --help lists "
                                          "them; docs/windows.md says what is Linux's)", argv[0]);
    cmd_usage(e, 0);
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: vram [--color WHEN] COMMAND [ARGS]\n\n"
                 "Get the most out of your GPUs' memory.\n\ncommands:\n");
    cmd_list(out);
    fprintf(out, "\noptions:\n"
                 "  --color WHEN   colour: auto (on a console, unless NO_COLOR is set),\n"
                 "                 always, never\n"
                 "  --version      print the version\n"
                 "\n'vram COMMAND --help' (or 'vram help COMMAND') for a command's options.\n"
                 "On Windows: no caps, no swap, no daemon (vram run, vram serve and the\n"
                 "others are Linux's); docs/windows.md says what works here.\n"
                 "Exit codes: 0 ok, 1 failure, 2 bad usage or input, 3 no GPU driver.\n");
}

/* ANSI colours on a console that understands them (Windows 10 and later):
 * where it does not, none. */
static void console_colors(void)
{
    HANDLE out = GetStdHandle(STD_OUTPUT_HANDLE);
    DWORD mode;
    if (out == INVALID_HANDLE_VALUE || !GetConsoleMode(out, &mode))
        return; /* not a console: color_on's isatty says no anyway */
    if (!SetConsoleMode(out, mode | 0x0004 /* ENABLE_VIRTUAL_TERMINAL_PROCESSING */))
        color_choose(COLOR_NEVER);
    SetConsoleOutputCP(CP_UTF8); /* process names are UTF-8 */
}

int main(int argc, char **argv)
{
    console_colors();
    return cmd_front(argc, argv, &(const struct cmd_front){.usage = usage});
}
