/* confuser: see confuser.h. Why not root: a model is code the daemon did
 * not write, and what it answers is parsed as untrusted; as root it could
 * read every other model's memory and host memory (/proc/PID/mem,
 * /proc/PID/fd), the daemon's included, and anything else on the machine.
 * Why not in the socket's group: its members load, unload and suspend
 * every model through the control API. */
#include "conf/confuser.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conf/config.h"

/* The group whose members may use the control socket, or -1. */
static gid_t socket_gid(void)
{
    char buf[16384];
    struct group gr, *g = NULL;
    return getgrnam_r(CONFUSER_SOCKET_GROUP, &gr, buf, sizeof buf, &g) == 0 && g ? g->gr_gid
                                                                                 : (gid_t)-1;
}

/* As root: the model's user, looked up and checked. */
static int as_root(const struct config *c, struct config_model *m, gid_t sock, char *err,
                   size_t len)
{
    const char *user = m->user[0] ? m->user : c->user[0] ? c->user : CONFUSER_DEFAULT;
    const char *group = m->group[0] ? m->group : c->group;
    const char *where = m->user[0] ? "in its [model]" : c->user[0] ? "in [serve]" : NULL;
    char why[200];
    if (runas_lookup(user, group, &m->run, why, sizeof why) < 0) {
        if (!where && !strcmp(user, CONFUSER_DEFAULT) && !strncmp(why, "no user", 7))
            snprintf(err, len,
                     "%s: model %s: a daemon run as root runs models as the user " CONFUSER_DEFAULT
                     ", which this system lacks (the package makes it): useradd --system "
                     "--user-group --home-dir /var/lib/vram/models --shell "
                     "/usr/sbin/nologin " CONFUSER_DEFAULT
                     ", or name a user of your own in [serve] (user = NAME)",
                     c->path, m->name);
        else
            snprintf(err, len, "%s: model %s: user = %s%s%s: %s", c->path, m->name, user,
                     group && *group ? ", group = " : "", group ? group : "", why);
        return -1;
    }
    const struct runas *r = &m->run;
    if (r->uid == 0) {
        snprintf(err, len,
                 "%s: model %s: user = %s (%s) is root: vram serve runs no model as root; give "
                 "it a user of its own (useradd --system NAME) with the groups its files need",
                 c->path, m->name, user, where ? where : "the default");
        return -1;
    }
    for (int k = -1; k < r->ngroups; k++) {
        gid_t g = k < 0 ? r->gid : r->groups[k];
        if (g == 0) {
            snprintf(err, len,
                     "%s: model %s: user %s would run in root's group (gid 0), which opens "
                     "root's files to it: give it another group (group = NAME)",
                     c->path, m->name, r->name);
            return -1;
        }
        if (sock != (gid_t)-1 && g == sock) {
            snprintf(
                err, len,
                "%s: model %s: user %s is in the group " CONFUSER_SOCKET_GROUP
                ", whose members control vram serve (load, unload, suspend): a model of "
                "it could act on every other: take it out (gpasswd -d %s " CONFUSER_SOCKET_GROUP
                "), or give the model another user",
                c->path, m->name, r->name, r->name);
            return -1;
        }
    }
    return 0;
}

int confuser_resolve(struct config *c, char *err, size_t len)
{
    bool root = geteuid() == 0;
    gid_t sock = root ? socket_gid() : (gid_t)-1;
    char me[RUNAS_NAME] = "";
    struct runas self;
    char why[200];
    for (size_t i = 0; i < c->nmodels; i++) {
        struct config_model *m = &c->models[i];
        memset(&m->run, 0, sizeof m->run);
        if (root) {
            if (as_root(c, m, sock, err, len) < 0)
                return -1;
            continue;
        }
        /* a user's daemon: its models are that user's, as everything it runs */
        const char *user = m->user[0] ? m->user : c->user;
        const char *group = m->group[0] ? m->group : c->group;
        if (!*user && !*group)
            continue;
        if (!me[0]) {
            char buf[16384];
            struct passwd pw, *p = NULL;
            if (getpwuid_r(geteuid(), &pw, buf, sizeof buf, &p) == 0 && p)
                snprintf(me, sizeof me, "%s", p->pw_name);
            else
                snprintf(me, sizeof me, "%u", (unsigned)geteuid());
        }
        if (*user && strcmp(user, me) != 0) {
            snprintf(err, len,
                     "%s: model %s: user = %s: only vram serve run as root runs models as "
                     "another user; this one runs as %s: leave user = out",
                     c->path, m->name, user, me);
            return -1;
        }
        if (*group &&
            (runas_lookup(me, group, &self, why, sizeof why) < 0 || self.gid != getegid())) {
            snprintf(err, len,
                     "%s: model %s: group = %s: only vram serve run as root runs models in "
                     "another group than its own: leave group = out",
                     c->path, m->name, group);
            return -1;
        }
    }
    return 0;
}

/* The program a command runs, when it names it by an absolute path that
 * the shell reads as it is (no quote, variable or other shell syntax). */
static bool program_of(const char *command, char *out, size_t len)
{
    const char *p = command;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = strcspn(p, " \t");
    if (*p != '/' || n >= len || strcspn(p, "\"'$`\\;|&<>(){}*?[]~") < n)
        return false;
    memcpy(out, p, n);
    out[n] = '\0';
    return true;
}

int confuser_check_files(const struct config_model *m, const char *shim, char *warn, size_t wlen,
                         char *err, size_t len)
{
    warn[0] = '\0';
    if (!m->run.on)
        return 0;
    char prog[CONFIG_PATH_MAX];
    const char *path[4];
    int want[4];
    const char *what[4];
    size_t n = 0;
    if (shim && *shim && config_uses_vramcap(m)) {
        path[n] = shim, want[n] = R_OK, what[n++] = "libvramcap";
    }
    if (m->file[0]) {
        path[n] = m->file, want[n] = R_OK, what[n++] = "its model file";
    }
    if (program_of(m->command, prog, sizeof prog)) {
        path[n] = prog, want[n] = X_OK, what[n++] = "its program";
    }
    if (access("/dev/nvidiactl", F_OK) == 0) {
        path[n] = "/dev/nvidiactl", want[n] = R_OK | W_OK, what[n++] = "the GPUs' control device";
    }
    size_t bad = 0;
    int eno = 0;
    int rc = runas_may_open(&m->run, path, want, n, &bad, &eno);
    if (rc < 0) {
        snprintf(err, len, "model %s: cannot become its user %s to check its files", m->name,
                 m->run.name);
        return -1;
    }
    if (rc == 0)
        return 0;
    if (bad == 0 && path[0] == shim) {
        snprintf(err, len,
                 "model %s runs as %s, who cannot read libvramcap (%s: %s): its cap and fast "
                 "swap would be lost; install vram (meson install) or put its build where "
                 "every user may read it",
                 m->name, m->run.name, shim, strerror(eno));
        return -1;
    }
    snprintf(warn, wlen,
             "model %s runs as %s, who cannot %s %s (%s, %s): it will fail to start; %s, or "
             "give the model a user that may (user =)",
             m->name, m->run.name,
             want[bad] & W_OK    ? "open"
             : want[bad] == X_OK ? "run"
                                 : "read",
             what[bad], path[bad], strerror(eno),
             path[bad] == prog  ? "let that user reach it (chmod o+rx on it and its folders)"
             : want[bad] & W_OK ? "add the user to the device's group (usermod -aG video USER)"
                                : "let that user read it (chmod o+r, and o+x on its folders)");
    return 0;
}
