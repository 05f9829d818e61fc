/* cmd: what every command shares, on Linux (cli/main.c's table) and on
 * Windows (win/winmain.c's): finding a command, its usage, a bad usage's
 * message and exit code. */
#include "cli/cmd.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/err.h"

const struct cmd_entry *cmd_find(const char *name)
{
    for (size_t k = 0; k < cmd_count; k++)
        if (!strcmp(name, cmd_table[k]->name))
            return cmd_table[k];
    return NULL;
}

void cmd_usage(const struct cmd_entry *e, int to_stderr)
{
    FILE *out = to_stderr ? stderr : stdout;
    fprintf(out, "usage: vram %s %s\n%s\n", e->name, e->args, e->summary);
    if (!to_stderr && e->help)
        fprintf(out, "\n%s", e->help);
}

int cmd_bad_usage(const struct cmd_entry *e, const char *fmt, ...)
{
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "vram %s: ", e->name);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    fprintf(stderr, "usage: vram %s %s\n(vram %s --help for details)\n", e->name, e->args, e->name);
    return err_exit_code(VRAM_EINPUT);
}
