#!/usr/bin/env python3
"""notify_listen.py SOCKET OUT: stands for systemd's notification socket.
Binds a datagram socket at SOCKET (a path, or @name for the abstract
namespace) and appends each message to OUT on one line, its newlines
written as '|', with the sender's pid first. Runs until killed."""
import os
import socket
import struct
import sys

path, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + path[1:] if path.startswith("@") else path)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
with open(out + ".ready", "w"):
    pass
while True:
    msg, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(12))
    pid = 0
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            pid = struct.unpack("iII", data[:12])[0]
    with open(out, "a") as f:
        f.write("%d %s\n" % (pid, msg.decode(errors="replace").replace("\n", "|")))
