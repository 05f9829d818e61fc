/* notify: systemd's readiness protocol, one datagram per state change.
 *
 * $NOTIFY_SOCKET is a path ("/run/systemd/notify") or, starting with '@',
 * a name in the abstract namespace. The service manager checks the
 * sender's credentials itself (NotifyAccess=main by default). */
#include "host/notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static char notify_path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];

void notify_init(void)
{
    const char *s = getenv("NOTIFY_SOCKET");
    if (s && (*s == '/' || *s == '@') && strlen(s) < sizeof notify_path - 1)
        snprintf(notify_path, sizeof notify_path, "%s", s);
    unsetenv("NOTIFY_SOCKET");
}

int notify_send(const char *state)
{
    if (!notify_path[0])
        return 0;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    size_t n = strlen(notify_path);
    if (n >= sizeof a.sun_path)
        return -1;
    memcpy(a.sun_path, notify_path, n);
    if (a.sun_path[0] == '@')
        a.sun_path[0] = '\0'; /* abstract: the length below bounds the name */
    socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
                                 (notify_path[0] == '/' ? 1 : 0));
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    ssize_t w = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&a, alen);
    int e = errno;
    close(fd);
    errno = e;
    return w == (ssize_t)strlen(state) ? 0 : -1;
}
