/* winproc: the process table on Windows.
 *
 * The snapshot gives every process's name and parent, with no rights
 * needed. The rest takes a handle with PROCESS_QUERY_LIMITED_INFORMATION,
 * which Windows grants for most processes of other users too, but not for
 * protected ones (csrss.exe, some services): those keep their name and
 * show "?" as their owner. */
#include "win/winproc.h"

#include <windows.h>

#include <tlhelp32.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 100 ns ticks between 1601 and 1970 */
#define EPOCH_DIFF 116444736000000000ULL

void winproc_utf8(const wchar_t *w, char *out, size_t len)
{
    if (!len)
        return;
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, out, (int)len, NULL, NULL);
    if (n <= 0) {
        /* too long: convert into room of its own, then cut at a character */
        int need = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
        char *tmp = need > 0 ? malloc((size_t)need) : NULL;
        out[0] = '\0';
        if (tmp && WideCharToMultiByte(CP_UTF8, 0, w, -1, tmp, need, NULL, NULL) > 0) {
            size_t cut = len - 1;
            while (cut > 0 && ((unsigned char)tmp[cut] & 0xC0) == 0x80)
                cut--; /* not inside a multi-byte character */
            memcpy(out, tmp, cut);
            out[cut] = '\0';
        }
        free(tmp);
    }
}

void winproc_free(struct winproc_table *t)
{
    free(t->v);
    t->v = NULL;
    t->n = 0;
}

int winproc_scan(struct winproc_table *t)
{
    winproc_free(t);
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
    if (snap == INVALID_HANDLE_VALUE)
        return -1;
    size_t cap = 0;
    PROCESSENTRY32W e;
    e.dwSize = sizeof e;
    for (BOOL ok = Process32FirstW(snap, &e); ok; ok = Process32NextW(snap, &e)) {
        if (t->n == cap) {
            size_t ncap = cap ? cap * 2 : 256;
            struct winproc_ent *v = realloc(t->v, ncap * sizeof *v);
            if (!v)
                break;
            t->v = v;
            cap = ncap;
        }
        struct winproc_ent *w = &t->v[t->n++];
        w->pid = e.th32ProcessID;
        w->ppid = e.th32ParentProcessID;
        winproc_utf8(e.szExeFile, w->exe, sizeof w->exe);
    }
    CloseHandle(snap);
    return 0;
}

/* The account that runs the process: "DOMAIN\user" cut to the user, and
 * the last part of its SID (the RID) as a number to show as its uid. */
static void owner(HANDLE h, struct snap_proc *p)
{
    HANDLE tok;
    snprintf(p->user, sizeof p->user, "?");
    if (!OpenProcessToken(h, TOKEN_QUERY, &tok))
        return;
    union {
        TOKEN_USER tu;
        char raw[256];
    } u;
    DWORD got;
    if (GetTokenInformation(tok, TokenUser, &u, sizeof u, &got)) {
        PSID sid = u.tu.User.Sid;
        wchar_t name[128], dom[128];
        DWORD nn = 128, dn = 128;
        SID_NAME_USE use;
        if (LookupAccountSidW(NULL, sid, name, &nn, dom, &dn, &use))
            winproc_utf8(name, p->user, sizeof p->user);
        PUCHAR count = GetSidSubAuthorityCount(sid);
        if (count && *count)
            p->uid = (uint32_t)*GetSidSubAuthority(sid, (DWORD)*count - 1);
    }
    CloseHandle(tok);
}

int winproc_fill(const struct winproc_table *t, struct snap_proc *p)
{
    const struct winproc_ent *e = NULL;
    for (size_t i = 0; i < t->n && !e; i++)
        if (t->v[i].pid == p->pid)
            e = &t->v[i];
    if (!e)
        return -1;
    p->host_known = true;
    p->ppid = e->ppid;
    p->state = SNAP_PS_RUNNING; /* Windows has no sleeping or stopped state to tell */
    snprintf(p->name, sizeof p->name, "%s", e->exe);
    snprintf(p->user, sizeof p->user, "?");
    HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, p->pid);
    if (!h)
        return 0;
    wchar_t path[MAX_PATH * 2];
    DWORD n = sizeof path / sizeof path[0];
    if (QueryFullProcessImageNameW(h, 0, path, &n))
        winproc_utf8(path, p->cmdline, sizeof p->cmdline);
    FILETIME c, x, k, u;
    if (GetProcessTimes(h, &c, &x, &k, &u)) {
        uint64_t ticks = ((uint64_t)c.dwHighDateTime << 32) | c.dwLowDateTime;
        p->start_time = ticks > EPOCH_DIFF ? (ticks - EPOCH_DIFF) / 10000000ULL : 0;
    }
    owner(h, p);
    CloseHandle(h);
    return 0;
}
