/* nextprobe: a preload library of the kind profilers are, wrapping getppid
 * and finding the real one with dlsym(RTLD_NEXT). Loaded after libvramcap,
 * it checks that libvramcap's dlsym keeps RTLD_NEXT relative to the caller:
 * if it did not, the lookup would find this very function and recurse. */
#include <dlfcn.h>
#include <unistd.h>

static int depth;

pid_t getppid(void)
{
    pid_t (*next)(void) = (pid_t(*)(void))dlsym(RTLD_NEXT, "getppid");
    if (!next || depth++ > 0)
        _exit(42);
    pid_t r = next();
    depth--;
    return r;
}
