/* winpdh: one read of the "GPU Process Memory" counters.
 *
 * Dedicated Usage is a plain count of bytes, so one collection is enough
 * (rates would need two, a second apart). The counter is added by its
 * English path, so that a French or German Windows answers too. */
#include "win/winpdh.h"

#include <windows.h>

#include <pdh.h>
#include <pdhmsg.h>

#include <stdio.h>
#include <stdlib.h>

#include "win/winnvml.h"
#include "win/winproc.h"

typedef PDH_STATUS(WINAPI *open_fn)(LPCWSTR, DWORD_PTR, PDH_HQUERY *);
typedef PDH_STATUS(WINAPI *add_fn)(PDH_HQUERY, LPCWSTR, DWORD_PTR, PDH_HCOUNTER *);
typedef PDH_STATUS(WINAPI *collect_fn)(PDH_HQUERY);
typedef PDH_STATUS(WINAPI *array_fn)(PDH_HCOUNTER, DWORD, LPDWORD, LPDWORD,
                                     PPDH_FMT_COUNTERVALUE_ITEM_W);
typedef PDH_STATUS(WINAPI *close_fn)(PDH_HQUERY);

static const wchar_t counter_path[] = L"\\GPU Process Memory(*)\\Dedicated Usage";

static int read_items(array_fn get, PDH_HCOUNTER c, struct wddm_set *set, char *why, size_t len)
{
    /* the instances may grow between the size and the read: try again */
    for (int tries = 0; tries < 4; tries++) {
        DWORD size = 0, count = 0;
        PDH_STATUS st = get(c, PDH_FMT_LARGE | PDH_FMT_NOCAP100, &size, &count, NULL);
        if (st == ERROR_SUCCESS && count == 0)
            return 0;
        if ((DWORD)st != PDH_MORE_DATA || size == 0) {
            snprintf(why, len, "the GPU counters gave nothing (PDH error 0x%08lx)",
                     (unsigned long)st);
            return -1;
        }
        PDH_FMT_COUNTERVALUE_ITEM_W *items = malloc(size);
        if (!items) {
            snprintf(why, len, "out of memory");
            return -1;
        }
        st = get(c, PDH_FMT_LARGE | PDH_FMT_NOCAP100, &size, &count, items);
        if ((DWORD)st == PDH_MORE_DATA) {
            free(items);
            continue;
        }
        if (st != ERROR_SUCCESS) {
            free(items);
            snprintf(why, len, "the GPU counters gave nothing (PDH error 0x%08lx)",
                     (unsigned long)st);
            return -1;
        }
        for (DWORD i = 0; i < count; i++) {
            char name[128];
            if (!items[i].szName)
                continue;
            winproc_utf8(items[i].szName, name, sizeof name);
            if (items[i].FmtValue.CStatus == ERROR_SUCCESS)
                wddm_add(set, name, (double)items[i].FmtValue.largeValue);
            else
                set->rejected++;
        }
        free(items);
        return 0;
    }
    snprintf(why, len, "the GPU counters kept changing while read");
    return -1;
}

int winpdh_read(struct wddm_set *set, char *why, size_t len)
{
    set->n = set->rejected = 0;
    HMODULE lib = winnvml_system_dll(L"pdh.dll");
    if (!lib) {
        snprintf(why, len, "no pdh.dll in System32 (error %lu)", (unsigned long)GetLastError());
        return -1;
    }
    open_fn open_q = (open_fn)(void *)GetProcAddress(lib, "PdhOpenQueryW");
    add_fn add = (add_fn)(void *)GetProcAddress(lib, "PdhAddEnglishCounterW");
    collect_fn collect = (collect_fn)(void *)GetProcAddress(lib, "PdhCollectQueryData");
    array_fn get = (array_fn)(void *)GetProcAddress(lib, "PdhGetFormattedCounterArrayW");
    close_fn close_q = (close_fn)(void *)GetProcAddress(lib, "PdhCloseQuery");
    int rc = -1;
    PDH_HQUERY q = NULL;
    PDH_HCOUNTER c = NULL;
    PDH_STATUS st;
    if (!open_q || !add || !collect || !get || !close_q) {
        snprintf(why, len, "pdh.dll lacks PdhAddEnglishCounterW (Windows before Vista)");
    } else if ((st = open_q(NULL, 0, &q)) != ERROR_SUCCESS) {
        snprintf(why, len, "PdhOpenQuery failed (0x%08lx)", (unsigned long)st);
        q = NULL;
    } else if ((st = add(q, counter_path, 0, &c)) != ERROR_SUCCESS) {
        snprintf(why, len,
                 "this Windows has no GPU Process Memory counters (0x%08lx; they came with "
                 "Windows 10 1709)",
                 (unsigned long)st);
    } else if ((st = collect(q)) != ERROR_SUCCESS) {
        snprintf(why, len, "the GPU counters could not be read (0x%08lx)", (unsigned long)st);
    } else {
        rc = read_items(get, c, set, why, len);
    }
    if (q)
        close_q(q);
    FreeLibrary(lib);
    return rc;
}
