"""isolation_hostile: a hostile model of vram serve, for isolation.sh. It
serves HTTP on $PORT like any model (/health), and GET /attack makes one
round of everything a model process can try against another model of the
same daemon, whose name it is given (its bytes are testmodel's pattern for
that name, so it knows what to look for):
  - its own descriptors, and every descriptor of every process it may open
    through /proc/PID/fd (regular files and memfds: the daemon's chunks of
    host memory, a model's pool), read whole;
  - every /proc/PID/mem it may open, each readable mapping of /proc/PID/maps;
  - every file of /dev/shm it may read;
  - every fast-swap socket of its daemon's processes (vram-swap-*, found in
    /proc/net/unix): `suspend` sent with two memfds of its own (SCM_RIGHTS),
    to have the process copy its GPU memory into them, then `resume`.
It answers with JSON: its uid, what it opened, where it found the victim's
bytes, which processes obeyed, which refused. The sockets of processes
other than its daemon's are left alone: on a machine where other tests run,
a hostile model that suspended them would fail their tests, not this one."""
import fcntl, json, os, re, socket, stat, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VICTIM = sys.argv[1]
MiB = 1 << 20
CAP = 2048 * MiB  # at most this much read of one process's memory
HUGE = 4096 * MiB  # a mapping this large is a reservation (ASan's shadow), not data
M64 = (1 << 64) - 1


def needle():
    """The first 32 bytes testmodel writes as model VICTIM (its pattern at
    offset 0: the seed from its name, then xorshift)."""
    seed = 0
    for c in VICTIM.encode():
        seed = ((seed ^ c) * 1099511628211) & M64
    x, out = seed, bytearray()
    for _ in range(32):
        x ^= (x << 13) & M64
        x ^= x >> 7
        x ^= (x << 17) & M64
        out.append(x & 0xFF)
    return bytes(out)


NEEDLE = needle()


def search(fd, limit, where, found):
    """Reads fd from 0 (pread) up to limit bytes, looking for the needle."""
    off, tail = 0, b""
    while off < limit:
        try:
            b = os.pread(fd, 4 * MiB, off)
        except OSError:
            return
        if not b:
            return
        if NEEDLE in tail + b:
            found.append(where)
            return
        tail = b[-len(NEEDLE):]
        off += len(b)


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def pids():
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())


def scan_fds(pid, r):
    d = "/proc/self/fd" if pid == "self" else f"/proc/{pid}/fd"
    try:
        names = os.listdir(d)
    except OSError:
        return
    if pid != "self":
        r["fd_dirs"].append(pid)
    for n in names:
        try:
            fd = os.open(f"{d}/{n}", os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode):
                if pid != "self":
                    r["fd_opened"] += 1
                search(fd, min(st.st_size, 1 << 34), f"/proc/{pid}/fd/{n}", r["found"])
        finally:
            os.close(fd)


def scan_mem(pid, r):
    try:
        fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
    except OSError:
        return
    r["mem_opened"].append(pid)
    left = CAP
    try:
        with open(f"/proc/{pid}/maps") as f:
            maps = f.read().splitlines()
        for line in maps:
            parts = line.split()
            if len(parts) < 2 or parts[1][0] != "r" or left <= 0:
                continue
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            if lo >= 1 << 47 or hi - lo > HUGE:  # [vsyscall], reservations
                continue
            n = min(hi - lo, left)
            left -= n
            got = []
            search_at(fd, lo, n, got)
            if got:
                r["found"].append(f"/proc/{pid}/mem at {lo:#x} ({' '.join(parts[5:])})")
                return
    except OSError:
        pass
    finally:
        os.close(fd)


def search_at(fd, base, n, found):
    off, tail = 0, b""
    while off < n:
        try:
            b = os.pread(fd, min(4 * MiB, n - off), base + off)
        except OSError:
            return
        if not b:
            return
        if NEEDLE in tail + b:
            found.append(base + off)
            return
        tail = b[-len(NEEDLE):]
        off += len(b)


def swap_sockets():
    """(pid, abstract name) of every listening vram-swap socket."""
    out = []
    with open("/proc/net/unix") as f:
        for line in f.read().splitlines()[1:]:
            p = line.split()
            if len(p) >= 8 and p[5] == "01" and p[7].startswith("@vram-swap-"):
                m = re.match(r"@vram-swap-(\d+)", p[7])
                if m:
                    out.append((int(m.group(1)), p[7][1:]))
    return out


def ask(name, line, fds=()):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    try:
        s.connect("\0" + name)
        try:
            if fds:
                socket.send_fds(s, [line.encode() + b"\n"], list(fds))
            else:
                s.sendall(line.encode() + b"\n")
        except BrokenPipeError:
            pass  # it answered and closed before reading: its answer is there
        out = b""
        while not out.endswith(b"\n"):
            b = s.recv(4096)
            if not b:
                break
            out += b
        return out.decode(errors="replace").strip()
    except OSError as e:
        return f"(no answer: {e})"
    finally:
        s.close()


def attack_sockets(daemon, r):
    for pid, name in swap_sockets():
        # its daemon's processes only (see the top): the daemon's descendants
        p, mine = pid, False
        for _ in range(64):
            if p == daemon:
                mine = True
                break
            if p <= 1:
                break
            p = parent_of(p)
        if not mine or pid == os.getpid():
            continue
        r["sockets"].append(pid)
        bait = []
        for _ in range(2):
            # as the daemon makes its chunks: the name, the size sealed
            fd = os.memfd_create("vram-host-chunk", os.MFD_ALLOW_SEALING)
            os.ftruncate(fd, 128 * MiB)
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS,
                        fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
            bait.append(fd)
        answer = ask(name, "suspend", bait)
        if answer.startswith("ok"):
            r["obeyed"].append(f"pid {pid}: {answer}")
            ask(name, "resume")  # leave it as it was, as far as it can be
        else:
            r["refused"].append(f"pid {pid}: {answer}")
        for fd in bait:
            got = []
            search(fd, 128 * MiB, "bait", got)
            if got:
                r["copied"].append(pid)
            os.close(fd)


def attack():
    r = {"uid": os.getuid(), "euid": os.geteuid(), "fd_dirs": [], "fd_opened": 0,
         "mem_opened": [], "shm_read": 0, "sockets": [], "found": [], "obeyed": [],
         "refused": [], "copied": []}
    me, daemon = os.getpid(), os.getppid()
    scan_fds("self", r)
    # the daemon and its processes first, then every other
    order = sorted(pids(), key=lambda p: (parent_of(p) != daemon and p != daemon, p))
    for pid in order:
        if pid == me or r["found"]:
            continue
        scan_fds(pid, r)
        scan_mem(pid, r)
    for n in sorted(os.listdir("/dev/shm")):
        try:
            fd = os.open(f"/dev/shm/{n}", os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode):
                r["shm_read"] += 1
                search(fd, st.st_size, f"/dev/shm/{n}", r["found"])
        finally:
            os.close(fd)
    attack_sockets(daemon, r)
    return r


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/health":
            body = b"ok"
        elif self.path == "/attack":
            body = json.dumps(attack()).encode()
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
