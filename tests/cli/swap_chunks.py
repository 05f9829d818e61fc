"""swap_chunks: fast swap into chunks of host memory, as the daemon hands
them to a model under libvramcap (VRAM_SWAP_DAEMON=1): memfds passed with
`prepare` (pinned ahead) and `suspend` (pinned as the copies reach them),
made as the daemon makes them (their name, their size sealed: no other
memfd is taken).
The model's bytes must land in the chunks in the order given and nowhere
else, a chunk the suspend did not need must be let go at once, every chunk
must be let go after the resume (the model keeps no view of memory the
daemon will hand to another), and the bytes must come back intact. Run by
swap_chunks.sh with the simulated driver."""
import fcntl, json, mmap, os, socket, subprocess, sys, tempfile, time, urllib.request

shim, testmodel, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
MiB = 1 << 20
SENT = 0xAB
fails = 0


def check(name, good, *info):
    global fails
    print(("ok - " if good else "not ok - ") + name)
    if not good:
        fails += 1
        for i in info:
            print("#   " + str(i))


def chunk(size, name="vram-host-chunk", seal=True):
    """A chunk as the daemon makes one (daemon/hostpool.c): its name, its
    size sealed; libvramcap maps no other memfd."""
    fd = os.memfd_create(name, os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, size)
    m = mmap.mmap(fd, size)
    m[:] = bytes([SENT]) * size
    if seal:
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
    return fd, m


env = dict(os.environ, PORT=str(port), LD_PRELOAD=shim, VRAM_SWAP="1", VRAM_SWAP_DAEMON="1")
m = subprocess.Popen([testmodel, "--bytes", "64M"], env=env,
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def get(path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
        return r.read().decode()


def ask(line, fds=()):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(f"\0vram-swap-{m.pid}")
    if fds:
        socket.send_fds(s, [line.encode() + b"\n"], list(fds))
    else:
        s.sendall(line.encode() + b"\n")
    out = b""
    while not out.endswith(b"\n"):
        b = s.recv(4096)
        if not b:
            break
        out += b
    s.close()
    return out.decode().strip()


def fields(answer):
    return dict(w.split("=", 1) for w in answer.split()[1:] if "=" in w)


def mapped_chunks():
    with open(f"/proc/{m.pid}/maps") as f:
        return sum(1 for line in f if "memfd:vram-host-chunk" in line)


def wait_for(cond, what):
    for _ in range(2000):
        if cond():
            return True
        time.sleep(0.01)
    return False


try:
    for _ in range(200):
        try:
            if "ok" in get("/health"):
                break
        except OSError:
            time.sleep(0.05)
    info = ask("info")
    moved = int(fields(info).get("bytes", 0))
    check("the model can be swapped fast", info.startswith("ok") and moved >= 64 * MiB, info)

    out = ask("suspend 5000")
    check("under the daemon, a suspend without host memory is refused (ask the daemon)",
          out.startswith("error") and "daemon" in out, out)

    c1, c2 = chunk(30 * MiB), chunk(20 * MiB)
    out = ask("prepare", [c1[0], c2[0]])
    check("prepare pins the chunks it is given", out.startswith("ok") and
          int(fields(out).get("held", 0)) == 50 * MiB, out)
    check("... and the process maps them", mapped_chunks() == 2, mapped_chunks())

    c3, c4 = chunk(moved - 50 * MiB + 4 * MiB), chunk(16 * MiB)
    out = ask("suspend 5000", [c3[0], c4[0]])
    check("a suspend into the prepared chunks and two more succeeds", out.startswith("ok"), out)
    held = int(fields(out).get("held", 0))
    check("it keeps the chunks it filled and lets the unused one go",
          held == 50 * MiB + len(c3[1]) and mapped_chunks() == 3, out, mapped_chunks())
    touched = [any(c[1][k] != SENT for k in range(0, len(c[1]), 64 * 1024)) for c in (c1, c2, c3)]
    check("every chunk it kept holds some of the model's bytes", all(touched), touched)
    check("the chunk it did not need is untouched", all(c4[1][k] == SENT for k in range(0, len(c4[1]), 4096)))
    n = len(c3[1])
    check("the chunks fill in order (the slack at the end of the last stays untouched)",
          all(c3[1][n - 4 * MiB + k] == SENT for k in range(0, 4 * MiB, 4096)))
    out = ask("resume")
    check("resume brings it back", out.startswith("ok"), out)
    c = json.loads(get("/checksum"))
    check("every byte is intact after the round trip", c.get("intact") is True, c)
    check("after the resume the process lets every chunk go",
          wait_for(lambda: mapped_chunks() == 0, "unmapped"), mapped_chunks())

    small = chunk(20 * MiB)
    out = ask("suspend 5000", [small[0]])
    check("chunks too few and no spill file: refused, the model runs on (host_budget holds: "
          "no memory of its own is taken)", out.startswith("error") and "spill file" in out, out)
    c = json.loads(get("/checksum"))
    check("... its bytes intact", c.get("intact") is True, c)

    # the disk tier: what the chunks cannot hold goes to the spill file
    spilldir = tempfile.mkdtemp(prefix="vram-spill-", dir=os.environ.get("TMPDIR", "/var/tmp"))
    def spill_file():
        p = os.path.join(spilldir, "m.spill")
        fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        return p, fd
    def fd_open(path):  # whether the model still holds the file open
        d = f"/proc/{m.pid}/fd"
        return any(os.readlink(os.path.join(d, f)).startswith(path) for f in os.listdir(d))
    small = chunk(20 * MiB)
    path, sfd = spill_file()
    out = ask(f"suspend 5000 {moved}", [small[0], sfd])
    os.close(sfd)
    f = fields(out)
    check("chunks too few, with a spill file: suspended, the rest on disk",
          out.startswith("ok") and int(f.get("disk", 0)) == moved - 20 * MiB and
          int(f.get("pool", 1)) == 0, out)
    st = os.stat(path)
    check("... the file holds those bytes on disk", st.st_blocks * 512 >= moved - 20 * MiB, st)
    os.unlink(path)  # as the daemon does once told: the model holds it open
    out = ask("resume")
    c = json.loads(get("/checksum"))
    check("... and every byte comes back from host memory and disk",
          out.startswith("ok") and c.get("intact") is True, out, c)
    check("... and the model lets the file go after the resume",
          wait_for(lambda: not fd_open(path), "file closed"))

    # a suspended model moves down: its chunks' bytes to the file
    whole = chunk(moved + MiB)
    out = ask("suspend 5000", [whole[0]])
    check("suspended into host memory alone", out.startswith("ok") and
          int(fields(out).get("disk", 1)) == 0, out)
    path, sfd = spill_file()
    out = ask(f"spill {moved + MiB}", [sfd])
    os.close(sfd)
    f = fields(out)
    check("spill: its bytes go to the file and its chunks back",
          out.startswith("ok") and int(f.get("held", 1)) == 0 and int(f.get("disk", 0)) >= moved and
          wait_for(lambda: mapped_chunks() == 0, "chunks unmapped"), out, mapped_chunks())
    whole[1][:] = bytes([SENT]) * len(whole[1])  # the daemon would hand it to another model now
    os.unlink(path)
    out = ask("resume")
    c = json.loads(get("/checksum"))
    check("... and every byte comes back from disk alone", out.startswith("ok") and
          c.get("intact") is True, out, c)

    mem = chunk(moved)
    path, sfd = spill_file()
    os.unlink(path)
    out = ask(f"suspend 5000 {moved}", [small[0], mem[0]])
    check("a memfd passed as the spill file is refused (RAM, not disk): the model runs on",
          out.startswith("error") and "memfd" in out and
          json.loads(get("/checksum")).get("intact") is True, out)
    os.close(sfd)
    os.rmdir(spilldir)

    keep = chunk(moved + MiB)
    out = ask("suspend 5000", [keep[0]])
    out2 = ask("resume 0 1")
    c = json.loads(get("/checksum"))
    check("a resume asked to keep its chunks keeps them pinned, ready for the next suspend",
          out.startswith("ok") and out2.startswith("ok") and c.get("intact") is True and
          mapped_chunks() == 1 and int(fields(ask("info")).get("held", 0)) == len(keep[1]), out2)
    out = ask("suspend 5000")
    check("... and the next suspend needs no other", out.startswith("ok"), out)
    out = ask("resume")
    check("... nor loses a byte", out.startswith("ok") and
          json.loads(get("/checksum")).get("intact") is True, out)
    wait_for(lambda: mapped_chunks() == 0, "unmapped")

    with tempfile.TemporaryFile() as t:
        t.truncate(64 * MiB)
        out = ask("suspend 5000", [t.fileno()])
    check("a descriptor that is not a memfd is refused", out.startswith("error") and
          "memfd" in out, out)
    c = json.loads(get("/checksum"))
    check("... and the model runs on intact", c.get("intact") is True, c)
    for what, bad in (("not sealed", chunk(moved + MiB, seal=False)),
                      ("of another name", chunk(moved + MiB, name="vram-test-chunk"))):
        out = ask("suspend 5000", [bad[0]])
        check(f"a memfd {what} is not the daemon's chunk: refused", out.startswith("error") and
              "not the daemon's chunk" in out and mapped_chunks() == 0, out)
    c = json.loads(get("/checksum"))
    check("... and the model runs on intact", c.get("intact") is True, c)
    out = ask("drop")
    check("drop answers with nothing held", out.startswith("ok") and
          int(fields(out).get("held", 1)) == 0, out)
finally:
    m.kill()
    m.wait()
sys.exit(1 if fails else 0)
