/* err: the return codes every module shares, and the exit codes they become.
 * Functions return 0 or one of these negative codes and fill a message. */
#ifndef VRAM_CORE_ERR_H
#define VRAM_CORE_ERR_H

enum {
    VRAM_OK = 0,
    VRAM_EFAIL = -1,     /* something went wrong at run time: exit 1 */
    VRAM_EINPUT = -2,    /* bad usage or bad input: exit 2 */
    VRAM_ENODRIVER = -3, /* no NVIDIA driver library: exit 3 */
};

static inline int err_exit_code(int rc)
{
    return rc >= 0 ? 0 : -rc;
}

#endif
