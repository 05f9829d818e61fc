#!/usr/bin/env python3
"""trickle: hostile clients for the proxy's tests. Usage:

  trickle.py tcp HOST PORT N SECONDS   N connections that each send a request
      head one byte every 0.5 s, reconnecting whenever the server closes
      one; prints how many the server closed
  trickle.py unix PATH N SECONDS       N connections to a Unix socket that
      send nothing (asked for until N are held, 3 s at most), held SECONDS,
      then closed; prints how many connected
  trickle.py idle HOST PORT N SECONDS  the same over TCP

With a file name in $TRICKLE_READY, "ready" is written there once every
connection is asked for (a test awaits it, never a fixed time).

Non-blocking throughout: a connection the server has not accepted yet
waits in its backlog as a real client's would."""
import errno
import os
import socket
import sys
import time

HEAD = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n"


def tcp(host, port, n, secs):
    conns = []  # [socket, bytes sent]

    def fresh():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex((host, port))
        return [s, 0]

    conns = [fresh() for _ in range(n)]
    closed = 0
    end = time.monotonic() + secs
    while time.monotonic() < end:
        for c in conns:
            s = c[0]
            try:
                data = s.recv(4096)
                gone = True  # an answer (408) or the end: the server closed it
            except BlockingIOError:
                gone = False
            except OSError as e:
                gone = e.errno not in (errno.ENOTCONN, errno.EAGAIN)
            if not gone:
                try:
                    c[1] += s.send(HEAD[c[1] % len(HEAD):c[1] % len(HEAD) + 1])
                except (BlockingIOError, OSError) as e:
                    gone = getattr(e, "errno", None) in (errno.EPIPE, errno.ECONNRESET)
            if gone:
                closed += 1
                s.close()
                c[:] = fresh()
        time.sleep(0.5)
    for c in conns:
        c[0].close()
    print(closed)


def ready():
    f = os.environ.get("TRICKLE_READY")
    if f:
        with open(f, "w") as out:
            out.write("ready\n")


def unix(path, n, secs, family=socket.AF_UNIX):
    held = []
    # a Unix socket's full backlog refuses at once (EAGAIN): asked again as
    # the server takes connections, for up to 3 s, until N are held
    until = time.monotonic() + 3
    while len(held) < n and time.monotonic() < until:
        s = socket.socket(family, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            if family == socket.AF_UNIX:
                s.connect(path)
            elif s.connect_ex(path) not in (0, errno.EINPROGRESS):
                raise OSError()
            held.append(s)
        except OSError:
            s.close()
            time.sleep(0.01)
    ready()
    time.sleep(secs)
    for s in held:
        s.close()
    print(len(held))


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[:1] == ["tcp"] and len(a) == 5:
        tcp(a[1], int(a[2]), int(a[3]), float(a[4]))
    elif a[:1] == ["unix"] and len(a) == 4:
        unix(a[1], int(a[2]), float(a[3]))
    elif a[:1] == ["idle"] and len(a) == 5:
        unix((a[1], int(a[2])), int(a[3]), float(a[4]), socket.AF_INET)
    else:
        sys.exit(__doc__)
