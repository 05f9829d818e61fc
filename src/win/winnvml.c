/* winnvml: nvml.dll, loaded at run time from where the NVIDIA driver puts
 * it: System32 (drivers since 2019, copied from the driver store), then
 * "NVIDIA Corporation\NVSMI" under Program Files (older drivers). Always by
 * full path: a DLL found by the default search order could be one planted
 * in the current folder. */
#include "win/winnvml.h"

#include <stdio.h>

#include "core/err.h"

HMODULE winnvml_system_dll(const wchar_t *name)
{
    wchar_t path[MAX_PATH];
    UINT n = GetSystemDirectoryW(path, MAX_PATH);
    if (n == 0 || n + 1 + wcslen(name) >= MAX_PATH)
        return NULL;
    path[n] = L'\\';
    wcscpy(path + n + 1, name);
    return LoadLibraryExW(path, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
}

static HMODULE nvsmi_dll(void)
{
    wchar_t dir[MAX_PATH], path[MAX_PATH];
    /* ProgramW6432: the 64-bit Program Files, whoever asks */
    DWORD n = GetEnvironmentVariableW(L"ProgramW6432", dir, MAX_PATH);
    if (n == 0 || n >= MAX_PATH)
        n = GetEnvironmentVariableW(L"ProgramFiles", dir, MAX_PATH);
    if (n == 0 || n >= MAX_PATH)
        return NULL;
    if (_snwprintf(path, MAX_PATH, L"%ls\\NVIDIA Corporation\\NVSMI\\nvml.dll", dir) < 0)
        return NULL;
    path[MAX_PATH - 1] = 0;
    return LoadLibraryExW(path, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
}

static void *sym(void *lib, const char *name)
{
    return (void *)GetProcAddress((HMODULE)lib, name);
}

static void unload(void *lib)
{
    FreeLibrary((HMODULE)lib);
}

int nvml_open(struct nvml **out, char *err, size_t errlen)
{
    *out = NULL;
    HMODULE lib = winnvml_system_dll(L"nvml.dll");
    DWORD why = lib ? 0 : GetLastError();
    if (!lib)
        lib = nvsmi_dll();
    if (!lib) {
        snprintf(err, errlen,
                 "cannot load nvml.dll (error %lu; looked in System32 and "
                 "Program Files\\NVIDIA Corporation\\NVSMI): no NVIDIA driver here. Install the "
                 "driver",
                 (unsigned long)why);
        return VRAM_ENODRIVER;
    }
    return nvml_attach(out, (void *)lib, sym, unload, err, errlen);
}
