/* headless_os: `vram headless` on Linux (cli/headless_os.h), the
 * "headless hybrid" setup: the other GPU drives the desktop, the NVIDIA
 * card only computes. The display servers and GPUs from the tree at --root
 * (host/display.c); `on` writes their configuration, keeping what it
 * replaces, which `off` restores exactly (host/rootfs.c). */
#include "cli/headless_os.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/headless.h"
#include "host/display.h"
#include "host/rootfs.h"

static void print_system(const struct hl_system *sys)
{
    printf("GPUs:\n");
    for (size_t i = 0; i < sys->ncards; i++) {
        const struct hl_card *c = &sys->cards[i];
        printf("  %-6s %-7s %-13s %-8s %-9s %s%s\n", c->name, headless_vendor_name(c->vendor),
               c->pci[0] ? c->pci : "-", c->driver[0] ? c->driver : "(none)",
               c->boot_vga ? "boot GPU" : "", c->nmonitors ? "monitor: " : "no monitor",
               c->monitors);
    }
    printf("display servers:");
    for (size_t i = 0; i < sys->nservers; i++) {
        const struct hl_server *s = &sys->servers[i];
        printf("%s %s (pid %u, %s%s)", i ? "," : "", s->name, s->pid,
               s->card >= 0 ? "on " : "GPU unknown", s->card >= 0 ? sys->cards[s->card].name : "");
    }
    printf("%s\n", sys->nservers ? "" : " none running");
}

/* The NVIDIA card a display server runs on, -1 if none does. */
static int desktop_on_nvidia(const struct hl_system *sys)
{
    for (size_t i = 0; i < sys->nservers; i++) {
        int c = sys->servers[i].card;
        if (c >= 0 && sys->cards[c].vendor == HL_VENDOR_NVIDIA)
            return c;
    }
    return -1;
}

static const char *when(int64_t t, char *buf, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!localtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M", &tm))
        snprintf(buf, len, "?");
    return buf;
}

static int status(const char *root, const struct hl_system *sys, int applied, int64_t since)
{
    print_system(sys);
    int nv = desktop_on_nvidia(sys);
    char t[32];
    if (applied) {
        printf("headless: on since %s%s\n", when(since, t, sizeof t),
               nv >= 0 ? " but not in effect yet: reboot" : "");
        printf("  vram headless off%s%s   puts the previous setup back\n",
               strcmp(root, "/") ? " --root " : "", strcmp(root, "/") ? root : "");
        return 0;
    }
    if (nv >= 0)
        printf("headless: off: the desktop runs on the NVIDIA card (%s)\n", sys->cards[nv].name);
    else
        printf("headless: off%s\n",
               sys->nservers ? ": the desktop does not use an NVIDIA card" : ": no desktop runs");
    struct hl_plan plan;
    char why[256];
    if (headless_plan(sys, &plan, why, sizeof why) < 0)
        printf("  vram headless on is not possible here: %s\n", why);
    else
        printf("  vram headless on   moves it to the %s GPU (%s)\n",
               headless_vendor_name(sys->cards[plan.display].vendor),
               sys->cards[plan.display].name);
    return 0;
}

static void show_line(const char *line, void *arg)
{
    (void)arg;
    printf("  %s\n", line);
}

/* A file's text, each line behind a margin. */
static void print_quoted(const char *text)
{
    while (*text) {
        size_t n = strcspn(text, "\n");
        fputs("        | ", stdout);
        fwrite(text, 1, n, stdout);
        fputc('\n', stdout);
        text += n + (text[n] == '\n');
    }
}

static int turn_on(const char *root, const struct hl_system *sys, bool yes, bool show)
{
    struct hl_plan plan;
    char why[512], p[1024];
    if (headless_plan(sys, &plan, why, sizeof why) < 0) {
        fprintf(stderr, "vram headless on: %s\n", why);
        return 1;
    }
    const struct hl_card *d = &sys->cards[plan.display];
    printf("the desktop moves to the %s GPU (%s, %s); the NVIDIA card is left to compute.\n",
           headless_vendor_name(d->vendor), d->name, d->pci);
    for (size_t i = 0; i < plan.nsteps; i++) {
        const struct hl_step *s = &plan.steps[i];
        rootfs_path(root, s->path, p, sizeof p);
        printf("  %s %s\n      %s\n", s->op == HL_WRITE ? "write    " : "set aside", p, s->why);
        if (show && s->op == HL_WRITE)
            print_quoted(s->content);
    }
    rootfs_path(root, ROOTFS_STATE, p, sizeof p);
    printf("anything replaced is kept under %s for `vram headless off`\n", p);
    if (!yes) {
        if (rootfs_check(root, &plan, why, sizeof why) < 0)
            printf("note: %s: run it as root (sudo)\n", why);
        printf("dry run: nothing changed; add --yes to do it\n");
        return 0;
    }
    if (rootfs_apply(root, &plan, (int64_t)time(NULL), why, sizeof why) < 0) {
        fprintf(stderr,
                "vram headless on: %s; nothing was changed. Run it as root (sudo), or "
                "on a test tree with --root DIR\n",
                why);
        return 1;
    }
    printf("done. For it to take effect: %s.\n", plan.after);
    return 0;
}

static int turn_off(const char *root, bool yes)
{
    char err[512];
    printf("restoring the setup from before `vram headless on`:\n");
    int n = rootfs_plan_revert(root, show_line, NULL, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "vram headless off: %s\n", err);
        return 1;
    }
    if (!yes) {
        printf("dry run: nothing changed; add --yes to do it\n");
        return 0;
    }
    if (rootfs_revert(root, err, sizeof err) < 0) {
        fprintf(stderr, "vram headless off: %s; run it again once that is fixed (as root)\n", err);
        return 1;
    }
    printf("done. The desktop goes back to its previous GPU after a reboot.\n");
    return 0;
}

int headless_os_check(const char *verb, const struct headless_opts *o, char *why, size_t len)
{
    (void)verb;
    struct stat st;
    if (stat(o->root, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, len, "--root '%s': not a directory", o->root);
        return -1;
    }
    return 0;
}

int headless_os_run(const char *verb, const struct headless_opts *o)
{
    bool yes = o->yes, show = o->show;
    const char *root = o->root;
    char err[512];
    int64_t since = 0;
    int applied = rootfs_applied(root, &since, err, sizeof err);
    if (applied < 0) {
        fprintf(stderr, "vram headless: %s\n", err);
        return 1;
    }
    char where[1024];
    if (!strcmp(verb, "off")) {
        if (!applied) {
            rootfs_path(root, ROOTFS_STATE, where, sizeof where);
            printf("headless is not on (no record under %s): nothing to restore\n", where);
            return 0;
        }
        return turn_off(root, yes);
    }
    struct hl_system sys;
    if (display_scan(root, &sys) < 0) {
        rootfs_path(root, "sys/class/drm", where, sizeof where);
        fprintf(stderr,
                "vram headless: %s not found: this works on Linux with kernel "
                "display drivers (on Windows: vram.exe headless)\n",
                where);
        return 1;
    }
    if (!strcmp(verb, "status"))
        return status(root, &sys, applied, since);
    if (applied) {
        char t[32];
        printf("headless is already on (since %s): nothing to do\n", when(since, t, sizeof t));
        return 0;
    }
    return turn_on(root, &sys, yes, show);
}
