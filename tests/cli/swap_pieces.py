"""swap_pieces: fast swap into a window of the daemon's host pool that is
in pieces (what the daemon gives when its pool is fragmented), as the
daemon sets it up: a memfd passed to a model under libvramcap, a suspend
naming the pieces. The model's bytes must land inside the pieces only
(everything outside them keeps its sentinel), fill them in order, and come
back intact on resume. Run by swap_pieces.sh with the simulated driver."""
import json, mmap, os, socket, subprocess, sys, time, urllib.request

shim, testmodel, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
MiB = 1 << 20
POOL = 160 * MiB
SENT = 0xAB
fails = 0


def check(name, good, *info):
    global fails
    print(("ok - " if good else "not ok - ") + name)
    if not good:
        fails += 1
        for i in info:
            print("#   " + str(i))


fd = os.memfd_create("vram-test-pool", 0)
os.ftruncate(fd, POOL)
pool = mmap.mmap(fd, POOL)
pool[:] = bytes([SENT]) * POOL
env = dict(os.environ, PORT=str(port), LD_PRELOAD=shim, VRAM_SWAP="1",
           VRAM_SWAP_POOL_FD=str(fd), VRAM_SWAP_POOL_SIZE=str(POOL))
m = subprocess.Popen([testmodel, "--bytes", "64M"], env=env, pass_fds=(fd,),
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def get(path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
        return r.read().decode()


def ask(line):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(f"\0vram-swap-{m.pid}")
    s.sendall(line.encode() + b"\n")
    out = b""
    while not out.endswith(b"\n"):
        b = s.recv(4096)
        if not b:
            break
        out += b
    s.close()
    return out.decode().strip()


try:
    for _ in range(200):
        try:
            if "ok" in get("/health"):
                break
        except OSError:
            time.sleep(0.05)
    info = ask("info")
    moved = int(dict(w.split("=", 1) for w in info.split()[1:] if "=" in w).get("bytes", 0))
    check("the model can be swapped fast", info.startswith("ok") and moved >= 64 * MiB, info)

    # three pieces, out of order in the pool, with gaps between them
    pieces = [(100 * MiB, 30 * MiB), (10 * MiB, 20 * MiB), (60 * MiB, moved - 50 * MiB + 4 * MiB)]
    line = "suspend 5000 " + " ".join(f"{o} {n}" for o, n in pieces)
    out = ask(line)
    check("a suspend into a window in three pieces succeeds", out.startswith("ok"), out)
    inside = bytearray(POOL)
    for o, n in pieces:
        inside[o:o + n] = b"\1" * n
    outside_ok = all(pool[i] == SENT for i in range(0, POOL, 4096) if not inside[i])
    check("nothing is written outside the pieces", outside_ok)
    touched = [any(pool[o + k] != SENT for k in range(0, n, 64 * 1024)) for o, n in pieces]
    check("every piece holds some of the model's bytes", all(touched), touched)
    # filled in order: the first two pieces whole, the last one to its end less the slack
    o, n = pieces[2]
    check("the pieces fill in order (the slack at the end of the last stays untouched)",
          all(pool[o + n - 4 * MiB + k] == SENT for k in range(0, 4 * MiB, 4096)))
    out = ask("resume")
    check("resume brings it back", out.startswith("ok"), out)
    c = json.loads(get("/checksum"))
    check("every byte is intact after the round trip", c.get("intact") is True, c)

    short = "suspend 5000 " + f"{10 * MiB} {20 * MiB} {60 * MiB} {20 * MiB}"
    out = ask(short)
    check("a window too short is refused, saying by how much", out.startswith("error") and
          "short" in out, out)
    c = json.loads(get("/checksum"))
    check("... and the model runs on intact", c.get("intact") is True, c)
    out = ask("suspend 5000 " + f"{POOL - MiB} {2 * MiB}")
    check("a piece outside the pool is refused", out.startswith("error") and "outside" in out, out)
finally:
    m.kill()
    m.wait()
sys.exit(1 if fails else 0)
