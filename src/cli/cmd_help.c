/* cmd_help: `vram help [COMMAND]`, the manual page of vram or of a command,
 * the text man shows (built in: cli/manual.h), through the pager on a
 * terminal. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/manual.h"

static int cmd_help(const void *opts, int argc, char **argv);

const struct cmd_entry cmd_help_entry = {
    .name = "help",
    .args = "[COMMAND]",
    .summary = "the manual of vram or of a command (as man vram-COMMAND)",
    .help = "Prints the manual page of COMMAND (or of vram), the text `man` shows, built\n"
            "into vram. On a terminal it goes through $PAGER (default less).\n"
            "`vram help vram.conf` is the daemon's configuration.\n",
    .max_operands = 1,
    .exec = cmd_help,
};

static int page_out(const char *text)
{
    FILE *out = stdout, *pipe = NULL;
    if (isatty(STDOUT_FILENO)) {
        const char *pager = getenv("PAGER");
        /* -F: no pager for a page that fits; -X: leave it on the screen */
        pipe = popen(pager && *pager ? pager : "less -FX", "w");
        if (pipe) {
            signal(SIGPIPE, SIG_IGN); /* the reader may quit before the end */
            out = pipe;
        }
    }
    fputs(text, out);
    if (pipe)
        pclose(pipe);
    return 0;
}

static int cmd_help(const void *opts, int argc, char **argv)
{
    (void)opts;
    const char *what = argc == 1 ? argv[0] : NULL;
    const struct cmd_entry *e = NULL;
    char name[96];
    if (!what || !strcmp(what, "vram")) {
        snprintf(name, sizeof name, "vram");
    } else if (!strcmp(what, "vram.conf")) {
        snprintf(name, sizeof name, "vram.conf");
    } else {
        e = cmd_find(what);
        if (!e || e->hidden)
            return cmd_bad_usage(&cmd_help_entry, "'%s' is not a vram command (vram --help lists them)",
                                 what);
        snprintf(name, sizeof name, "vram-%s", e->name);
    }
    const char *text = manual_find(name);
    if (text)
        return page_out(text);
    /* built without scdoc or groff: the short help is all there is */
    fprintf(stderr, "vram help: the manual pages were not built into this vram (scdoc and groff "
                    "were missing at build time); here is the short help\n");
    if (e)
        cmd_usage(e, 0);
    else
        execl("/proc/self/exe", "vram", "--help", (char *)NULL);
    return 0;
}
