"""swap_bench: fast swap against the driver's checkpoint and a cold reload,
side by side on one GPU. For each size and allocator, one PyTorch process
(swap_model.py) started by `vram run --swap`, then:
  fast    N x (vram suspend PID; vram resume PID; check)
  driver  M x (vram suspend --driver PID; vram resume PID; check)
  reload  K x (load the same weights from a safetensors file in the page
          cache; check)
Times are the wall time of each vram command (what a user waits), plus the
fast path's own copy time. VRAM left while suspended is what vram suspend
reads from NVML for the process. Writes JSON lines to OUT/swap.jsonl and a
table on stdout.
usage: swap_bench.py VRAM SIZES ALLOC FAST DRIVER RELOAD [--busy]
"""
import json, os, re, statistics, subprocess, sys, time

vram, sizes, alloc = sys.argv[1], [float(s) for s in sys.argv[2].split(",")], sys.argv[3]
nfast, ndrv, nrel = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
busy = "--busy" in sys.argv
out = os.environ.get("OUT", "/tmp/vram-out")
here = os.path.dirname(os.path.abspath(__file__))
log = open(os.path.join(out, "swap.jsonl"), "a")
rows = []


def run(*args):
    t0 = time.perf_counter()
    p = subprocess.run([vram, *args], capture_output=True, text=True)
    return time.perf_counter() - t0, p.returncode, p.stdout + p.stderr


def gib(text, word):
    m = re.search(word + r" ([0-9.]+) (GiB|MiB|KiB|B)\b", text)
    if not m:
        return None
    return float(m.group(1)) / {"GiB": 1, "MiB": 1024, "KiB": 1 << 20, "B": 1 << 30}[m.group(2)]


def copy_s(text):
    m = re.search(r"(moved out|copied back) in ([0-9.]+) s", text)
    return float(m.group(2)) if m else None


def field(text, label):
    m = re.search(label + r" ([0-9.]+) s", text)
    return float(m.group(1)) if m else None


def pool_s(text):
    m = re.search(r"host pool grown ([0-9.]+) s", text)
    return float(m.group(1)) if m else None


for size in sizes:
    env = dict(os.environ)
    if alloc == "expandable":
        env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
    cmd = [vram, "run", "--swap", "--quiet", "--", "python3", os.path.join(here, "swap_model.py"),
           "--gib", str(size)] + (["--busy"] if busy else [])
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    ready = p.stdout.readline().split()
    if not ready or ready[0] != "ready":
        print("model did not start:", ready)
        sys.exit(1)
    pid = int(ready[1])

    def ask(c):
        p.stdin.write(c + "\n")
        p.stdin.flush()
        return p.stdout.readline().strip()

    first = ask("check")
    # vram run --swap readies the host pool while the process is idle
    # (VRAM_SWAP_POOL=ready, the default): a user's first suspend comes
    # after the model has sat idle a while; how long readying took is
    # reported, and the first suspend is measured like the others
    ready_s = None
    f = {}
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 120:
        try:
            import socket
            sk = socket.socket(socket.AF_UNIX)
            sk.connect("\0vram-swap-%d" % pid)
            sk.sendall(b"info\n")
            f = dict(w.split("=", 1) for w in sk.recv(4096).decode().split()[1:] if "=" in w)
            sk.close()
            if f.get("policy") != "ready" or int(f.get("pool", 0)) >= int(f.get("bytes", 1)):
                ready_s = time.perf_counter() - t0
                break
        except OSError:
            pass
        time.sleep(0.1)
    res = {"size": size, "alloc": alloc, "busy": busy, "fast_out": [], "fast_in": [],
           "fast_copy_out": [], "fast_copy_in": [], "pool": [], "wait": [], "fast_left": [], "drv_out": [],
           "drv_in": [], "drv_left": [], "reload": [], "checks": 0, "bad": 0, "errors": [],
           "ready_s": ready_s, "ready_info": f}

    def check():
        r = ask("check")
        res["checks"] += 1
        if not r.startswith("ok") or r.split()[1:3] != first.split()[1:3]:
            res["bad"] += 1
            res["errors"].append("check: " + r)

    for path, n in (("fast", nfast), ("drv", ndrv)):
        for i in range(n):
            extra = ["--driver"] if path == "drv" else []
            t, rc, txt = run("suspend", str(pid), *extra)
            if rc != 0 or ("fast path" in txt) != (path == "fast"):
                res["errors"].append("suspend: " + txt.strip())
                break
            res[path + "_out"].append(t)
            res[path + "_left"].append(gib(txt, "now"))
            if path == "fast":
                res["fast_copy_out"].append(copy_s(txt))
                res["pool"].append(pool_s(txt))
                res["wait"].append(field(txt, "waiting for its work"))
            t, rc, txt = run("resume", str(pid))
            if rc != 0:
                res["errors"].append("resume: " + txt.strip())
                break
            res[path + "_in"].append(t)
            if path == "fast":
                res["fast_copy_in"].append(copy_s(txt))
            check()
    if nrel:
        f = "/dev/shm/swap_bench_%d.safetensors" % pid
        ask("save " + f)
        for i in range(nrel):
            r = ask("reload " + f)
            res["reload"].append(float(r.split()[1]))
            check()
        os.unlink(f)
    if busy:
        res["stats"] = ask("stats")
    ask("quit")
    p.stdin.close()
    p.wait(timeout=120)
    log.write(json.dumps(res) + "\n")
    log.flush()
    rows.append(res)


def med(v):
    v = [x for x in v if x is not None]
    return "%.3f" % statistics.median(v) if v else "-"


def rng(v):
    v = [x for x in v if x is not None]
    return "%.2f-%.2f" % (min(v), max(v)) if v else "-"


print("size alloc      busy | fast out (in libvramcap) | fast in (in libvramcap) | 1st pool | left | driver out | "
      "driver in | left | reload | checks bad")
for r in rows:
    print("%4.0fG %-10s %-4s | %s (%s) | %s (%s) | %s | %s | %s | %s | %s | %s | %d %d" % (
        r["size"], r["alloc"], "y" if r["busy"] else "n", med(r["fast_out"]),
        med(r["fast_copy_out"]), med(r["fast_in"]), med(r["fast_copy_in"]),
        "%.2f" % r["pool"][0] if r["pool"] and r["pool"][0] is not None else "-",
        med(r["fast_left"]), med(r["drv_out"]), med(r["drv_in"]), med(r["drv_left"]),
        med(r["reload"]), r["checks"], r["bad"]))
    print("      fast path: waiting for the process's work (median) %s s" % med(r["wait"]))
    fo = [x for x in r["fast_out"] if x is not None]
    if len(fo) > 1:
        later = statistics.median(fo[1:])
        print("      first suspend %.3f s, later ones (median) %.3f s: %.2fx; readied ahead in %s s"
              % (fo[0], later, fo[0] / later if later else float("nan"),
                 "%.1f" % r["ready_s"] if r["ready_s"] is not None else
                 "- (pool %s of %s)" % (r["ready_info"].get("pool"), r["ready_info"].get("bytes"))))
    for e in r["errors"][:3]:
        print("   error:", e[:300])
