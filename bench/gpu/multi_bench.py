"""multi_bench: the parts of bench/gpu_multi.sh. Each part suspends and
resumes one model by fast swap CYCLES times, checks every byte after each
resume (and peer copies where the model has peers), and appends one row
to OUT/multi.jsonl.
usage:
  multi_bench.py ctx VRAM GIB CYCLES
      one process with two contexts on one GPU (multi_ctx.py) under
      `vram run --swap`: vram suspend PID, vram resume PID
  multi_bench.py daemon VRAM CYCLES NAME:MODEL[:peer]...
      models of the running vram serve (VRAM_SOCKET): vram suspend M,
      vram resume M, the daemon's own times and bytes from vram ps --json
  multi_bench.py table
      the rows so far, as a table
"""
import json, os, re, statistics, subprocess, sys, time, urllib.request

out = os.environ.get("OUT", "/tmp/vram-out")
here = os.path.dirname(os.path.abspath(__file__))
rows_path = os.path.join(out, "multi.jsonl")


def run(vram, *args):
    t0 = time.perf_counter()
    p = subprocess.run([vram, *args], capture_output=True, text=True)
    return time.perf_counter() - t0, p.returncode, (p.stdout + p.stderr).strip()


def size_gib(text, word):
    m = re.search(r"([0-9.]+) (GiB|MiB|KiB|B) " + word, text)
    if not m:
        return None
    return float(m.group(1)) / {"GiB": 1, "MiB": 1024, "KiB": 1 << 20, "B": 1 << 30}[m.group(2)]


def copy_s(text):
    m = re.search(r"(moved out|copied back) in ([0-9.]+) s", text)
    return float(m.group(2)) if m else None


def new_row(name, gpus, cycles, detail):
    """out, in: the times compared; detail_out, detail_in: what detail says"""
    return {"part": name, "gpus": gpus, "cycles": cycles, "gib": None, "out": [], "in": [],
            "detail": detail, "detail_out": [], "detail_in": [], "fast": 0, "intact": 0,
            "peer": None, "errors": []}


def save(row):
    with open(rows_path, "a") as f:
        f.write(json.dumps(row) + "\n")
    print("ROW " + json.dumps(row), flush=True)


def part_ctx(vram, gib, cycles):
    row = new_row("2 contexts, 1 GPU (cuMemAlloc)", 1, cycles, "libvramcap's copies")
    p = subprocess.Popen([vram, "run", "--swap", "--quiet", "--", "python3",
                          os.path.join(here, "multi_ctx.py"), "--gib", str(gib)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ready = p.stdout.readline().split()
    if not ready or ready[0] != "ready":
        row["errors"].append("did not start: %s" % ready)
        save(row)
        return

    def ask(c):
        p.stdin.write(c + "\n")
        p.stdin.flush()
        return p.stdout.readline().strip()

    pid = ready[1]
    row["gib"] = int(ready[2]) / 2**30
    first = ask("check")
    if not first.startswith("ok"):
        row["errors"].append("before: " + first)
    for i in range(cycles):
        t, rc, txt = run(vram, "suspend", pid)
        if rc != 0:
            row["errors"].append("suspend %d: %s" % (i, txt[:300]))
            break
        row["fast"] += "(fast path)" in txt
        row["out"].append(t)
        row["detail_out"].append(copy_s(txt))
        t, rc, txt = run(vram, "resume", pid)
        if rc != 0:
            row["errors"].append("resume %d: %s" % (i, txt[:300]))
            break
        row["in"].append(t)
        row["detail_in"].append(copy_s(txt))
        r = ask("check")
        row["intact"] += r.startswith("ok")
        if not r.startswith("ok"):
            row["errors"].append("check %d: %s" % (i, r))
    ask("quit")
    p.stdin.close()
    p.wait(timeout=120)
    save(row)


def ps(vram, name):
    t, rc, txt = run(vram, "ps", "--json")
    for m in json.loads(txt)["models"] if rc == 0 else []:
        if m["name"] == name:
            return m
    return {}


def get(vram, model, path):
    port = ps(vram, model).get("port")
    with urllib.request.urlopen("http://127.0.0.1:%s%s" % (port, path), timeout=600) as r:
        return json.loads(r.read())


def part_daemon(vram, cycles, name, model, peer):
    row = new_row(name, None, cycles, "the vram command's wall time")
    t, rc, txt = run(vram, "load", model, "--timeout", "10m")
    if rc != 0:
        row["errors"].append("load: " + txt[:300])
        save(row)
        return
    row["gpus"] = len(ps(vram, model).get("gpus", []))
    ref = get(vram, model, "/checksum")
    if peer:
        row["peer"] = 0
        first = get(vram, model, "/peer")
        if not first.get("peer"):
            row["errors"].append("peer before: %s" % first)
    for i in range(cycles):
        t, rc, txt = run(vram, "suspend", model)
        m = ps(vram, model)
        if rc != 0 or m.get("state") != "suspended":
            row["errors"].append("suspend %d: %s" % (i, txt[:300]))
            break
        row["fast"] += m.get("suspended_by") == "fast"
        row["gib"] = m.get("host_bytes", 0) / 2**30
        row["out"].append(m.get("last_suspend_s") or t)
        row["detail_out"].append(t)
        t, rc, txt = run(vram, "resume", model)
        m = ps(vram, model)
        if rc != 0 or m.get("state") != "ready":
            row["errors"].append("resume %d: %s" % (i, txt[:300]))
            break
        row["in"].append(m.get("last_resume_s") or t)
        row["detail_in"].append(t)
        ok = get(vram, model, "/checksum") == ref
        row["intact"] += ok
        if not ok:
            row["errors"].append("checksum %d differs" % i)
        if peer:
            r = get(vram, model, "/peer")
            row["peer"] += bool(r.get("peer"))
            if not r.get("peer"):
                row["errors"].append("peer %d: %s" % (i, r))
    save(row)


def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


def fmt(x, f="%.3f"):
    return f % x if x is not None else "-"


def table():
    rows = [json.loads(l) for l in open(rows_path)] if os.path.exists(rows_path) else []
    print("%-34s %4s %7s %6s %9s %9s %9s %9s %6s %6s %6s" % (
        "part", "GPUs", "GiB", "cycles", "out s", "in s", "out s/GiB", "in s/GiB", "fast",
        "intact", "peer"))
    for r in rows:
        o, i, g = med(r["out"]), med(r["in"]), r["gib"]
        done = len(r["in"])
        print("%-34s %4s %7s %6s %9s %9s %9s %9s %6s %6s %6s" % (
            r["part"][:34], r["gpus"] if r["gpus"] is not None else "-", fmt(g, "%.2f"),
            "%d/%d" % (done, r["cycles"]), fmt(o), fmt(i),
            fmt(o / g if o is not None and g else None, "%.4f"),
            fmt(i / g if i is not None and g else None, "%.4f"),
            "%d/%d" % (r["fast"], done), "%d/%d" % (r["intact"], done),
            "%d/%d" % (r["peer"], done) if r["peer"] is not None else "-"))
        print("    %s: out %s s, in %s s (medians)" % (r["detail"], fmt(med(r["detail_out"])),
                                                       fmt(med(r["detail_in"]))))
        for e in r["errors"][:3]:
            print("    error:", e[:300])
    print("out/in s: median per cycle (ctx: the vram command's wall time; daemon: the daemon's own "
          "suspend/resume time, all the model's processes); medians over the cycles done")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what == "ctx":
        part_ctx(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]))
    elif what == "daemon":
        for spec in sys.argv[4:]:
            name, model, *flags = spec.split(":")
            part_daemon(sys.argv[2], int(sys.argv[3]), name, model, "peer" in flags)
    elif what == "table":
        table()
    else:
        sys.exit(__doc__)
