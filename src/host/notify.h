/* notify: tells systemd how the daemon is doing (a Type=notify service):
 * READY=1 once it listens, RELOADING=1 and READY=1 around a reload,
 * STOPPING=1 on the way out. The protocol of sd_notify(3), written here
 * without libsystemd: one datagram to the socket $NOTIFY_SOCKET names. */
#ifndef VRAM_HOST_NOTIFY_H
#define VRAM_HOST_NOTIFY_H

/* Takes $NOTIFY_SOCKET out of the environment (the models the daemon
 * starts must not inherit it) and keeps it for notify_send. Call first. */
void notify_init(void);

/* Sends state ("READY=1", "STATUS=..."; lines joined by '\n'). Returns 0,
 * also when not started by systemd; -1 when the socket would not take it. */
int notify_send(const char *state);

#endif
