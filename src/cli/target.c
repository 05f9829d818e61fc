/* target: a pid or a model of vram serve, and a model's verb asked of the
 * daemon (cli/client.h), with a progress line while it works. */
#include "cli/target.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/client.h"
#include "cli/progress.h"
#include "core/modelname.h"

int target_parse(const struct cmd_entry *e, const char *arg, int *pid)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (!isdigit((unsigned char)*arg) || *end)
        return 0;
    if (v <= 0 || v > 4194304) /* the kernel's pid_max at most */
        return -cmd_bad_usage(e, "'%s': a process id or a model name", arg);
    *pid = (int)v;
    return 1;
}

int target_model(const struct cmd_entry *e, const char *sock, const char *name, json_t *body,
                 const char *doing)
{
    char path[MODELNAME_MAX * 3 + 64], err[512];
    if (client_model_path(name, e->name, path, sizeof path, err, sizeof err) < 0) {
        fprintf(stderr, "vram %s: %s\n", e->name, err);
        return 2;
    }
    json_t *r;
    struct progress pr;
    char what[160];
    snprintf(what, sizeof what, "%s %s", doing, name);
    progress_start(&pr, what);
    long st = client_call(client_socket(sock), "POST", path, body, &r, err, sizeof err);
    progress_stop(&pr);
    int rc = client_report(e->name, st, r, err);
    json_decref(r);
    return rc;
}
