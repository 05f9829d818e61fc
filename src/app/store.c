/* store: SQLite, one connection, WAL, statements prepared per call (the
 * rates here are a few per second at most). A store that cannot be written
 * (disk full) makes the daemon forget history, never stop serving. */
#include "app/store.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct store {
    sqlite3 *db;
};

static const char schema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "CREATE TABLE IF NOT EXISTS events(t_ms INTEGER, model TEXT, kind TEXT, seconds REAL,"
    " detail TEXT);"
    "CREATE TABLE IF NOT EXISTS footprints(model TEXT, gpu_name TEXT, bytes INTEGER,"
    " PRIMARY KEY(model, gpu_name));"
    "CREATE TABLE IF NOT EXISTS procs(model TEXT PRIMARY KEY, pid INTEGER, start INTEGER,"
    " state TEXT, gpu INTEGER, port INTEGER, bytes INTEGER, how TEXT);";

/* The store and its -wal, -shm and -journal (SQLite makes them with the
 * store's mode) are for the daemon's user and the control socket's group
 * (group vram, where it exists, as api.c gives the socket): they name the
 * models, when each ran and why it failed, which no other user is to
 * read (issue 42, item 3; a store of an older version was 0644). Only a
 * file of this user's is changed, never one a link leads to. */
static void restrict_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()) {
        struct group *g = getgrnam("vram");
        if (g && st.st_gid != g->gr_gid && fchown(fd, (uid_t)-1, g->gr_gid) < 0) {
            /* not in the group: the file keeps the user's own */
        }
        if ((st.st_mode & 07777) != 0640)
            fchmod(fd, 0640);
    }
    close(fd);
}

static void restrict_store(const char *path)
{
    static const char *const tails[] = {"", "-wal", "-shm", "-journal"};
    char p[4200];
    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++)
        if ((size_t)snprintf(p, sizeof p, "%s%s", path, tails[i]) < sizeof p)
            restrict_file(p);
}

int store_open(struct store **out, const char *path, char *err, size_t len)
{
    *out = NULL;
    /* made here first, 0640, so that no moment finds it readable by all */
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0640);
    if (fd >= 0)
        close(fd);
    restrict_store(path);
    struct store *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    char *msg = NULL;
    if (sqlite3_open(path, &s->db) != SQLITE_OK ||
        sqlite3_exec(s->db, schema, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, len, "%s: %s (is the directory there and writable?)", path,
                 msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        sqlite3_close(s->db);
        free(s);
        return -1;
    }
    sqlite3_busy_timeout(s->db, 1000);
    restrict_store(path); /* its -wal and -shm, made by the schema's first write */
    /* added later: a store of an older vram gains it (an error: it has it) */
    sqlite3_exec(s->db, "ALTER TABLE procs ADD COLUMN gpus INTEGER DEFAULT 0", NULL, NULL, NULL);
    *out = s;
    return 0;
}

struct store *store_open_readonly(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != getuid()))
        return NULL;
    struct store *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(s->db);
        free(s);
        return NULL;
    }
    sqlite3_busy_timeout(s->db, 200);
    return s;
}

void store_close(struct store *s)
{
    if (!s)
        return;
    sqlite3_close(s->db);
    free(s);
}

static sqlite3_stmt *prep(struct store *s, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return NULL;
    return st;
}

void store_event(struct store *s, uint64_t t_ms, const char *model, const char *kind,
                 double seconds, const char *detail)
{
    sqlite3_stmt *st = prep(s, "INSERT INTO events VALUES(?,?,?,?,?)");
    if (!st)
        return;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)t_ms);
    sqlite3_bind_text(st, 2, model, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, kind, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 4, seconds);
    sqlite3_bind_text(st, 5, detail ? detail : "", -1, SQLITE_TRANSIENT);
    sqlite3_step(st);
    sqlite3_finalize(st);
}

uint64_t store_footprint(struct store *s, const char *model, const char *gpu_name)
{
    sqlite3_stmt *st = prep(s, "SELECT bytes FROM footprints WHERE model=? AND gpu_name=?");
    uint64_t b = 0;
    if (!st)
        return 0;
    sqlite3_bind_text(st, 1, model, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, gpu_name, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW)
        b = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return b;
}

void store_set_footprint(struct store *s, const char *model, const char *gpu_name, uint64_t bytes)
{
    sqlite3_stmt *st = prep(s, "INSERT OR REPLACE INTO footprints VALUES(?,?,?)");
    if (!st)
        return;
    sqlite3_bind_text(st, 1, model, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, gpu_name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)bytes);
    sqlite3_step(st);
    sqlite3_finalize(st);
}

void store_put_proc(struct store *s, const struct store_proc *p)
{
    sqlite3_stmt *st = prep(s, "INSERT OR REPLACE INTO procs(model, pid, start, state, gpu, port, "
                               "bytes, how, gpus) VALUES(?,?,?,?,?,?,?,?,?)");
    if (!st)
        return;
    sqlite3_bind_text(st, 1, p->model, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 2, p->pid);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)p->start);
    sqlite3_bind_text(st, 4, p->state, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 5, p->gpu);
    sqlite3_bind_int(st, 6, (int)p->port);
    sqlite3_bind_int64(st, 7, (sqlite3_int64)p->bytes);
    sqlite3_bind_text(st, 8, p->how, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 9, (sqlite3_int64)p->gpus);
    sqlite3_step(st);
    sqlite3_finalize(st);
}

void store_del_proc(struct store *s, const char *model)
{
    sqlite3_stmt *st = prep(s, "DELETE FROM procs WHERE model=?");
    if (!st)
        return;
    sqlite3_bind_text(st, 1, model, -1, SQLITE_TRANSIENT);
    sqlite3_step(st);
    sqlite3_finalize(st);
}

static void text(sqlite3_stmt *st, int col, char *out, size_t len)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    snprintf(out, len, "%s", t ? (const char *)t : "");
}

size_t store_procs(struct store *s, struct store_proc *out, size_t max)
{
    sqlite3_stmt *st =
        prep(s, "SELECT model, pid, start, state, gpu, port, bytes, how, gpus FROM procs");
    size_t n = 0;
    if (!st)
        return 0;
    while (n < max && sqlite3_step(st) == SQLITE_ROW) {
        struct store_proc *p = &out[n++];
        memset(p, 0, sizeof *p);
        text(st, 0, p->model, sizeof p->model);
        p->pid = sqlite3_column_int(st, 1);
        p->start = (uint64_t)sqlite3_column_int64(st, 2);
        text(st, 3, p->state, sizeof p->state);
        p->gpu = sqlite3_column_int(st, 4);
        p->port = (unsigned)sqlite3_column_int(st, 5);
        p->bytes = (uint64_t)sqlite3_column_int64(st, 6);
        text(st, 7, p->how, sizeof p->how);
        p->gpus = (uint32_t)sqlite3_column_int64(st, 8);
    }
    sqlite3_finalize(st);
    return n;
}
