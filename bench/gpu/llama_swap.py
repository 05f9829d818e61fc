"""llama_swap: a real llama.cpp llama-server behind `vram serve` with
`swap = fast`, suspended mid-generation and resumed N times, answering a
fixed prompt the same before and after (greedy, fixed seed). Two models
share a GPU budget that holds one: while model `a` generates a long
answer, a request for `b` makes the daemon suspend `a` mid-request by fast
swap (time slices, slice 1s), answer `b`, and bring `a` back, which
finishes its answer; every answer of `a` is compared with the one it gave
before any swap. Then the idle suspend and resume of `a` by fast swap, and
of the same server under `swap = driver` (the driver's checkpoint), D
times each, with the answer checked after each.
  a  a Llama-1B-shaped model, random f16 weights (bench/mkgguf.py shapes;
     written here with numpy, scaled to keep activations finite)
  b  the tiny model of the tests (mkgguf.py --random)
With --sim TESTMODEL, testmodel (tests/helpers/testmodel.c) stands in for
llama-server on the simulated driver: each streamed token reads the GPU
memory and says whether it is intact.
usage: llama_swap.py VRAM LLAMA_SERVER DIR N D [--sim TESTMODEL]
Writes $OUT/llama.json and prints a table."""
import json, os, signal, subprocess, sys, threading, time, urllib.request

# a timeout's TERM still stops the daemon (and its models) below
signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))

args = sys.argv[1:]
sim = None
if "--sim" in args:
    i = args.index("--sim")
    sim = args[i + 1]
    del args[i:i + 2]
vram, server, d, n, nd = args[0], args[1], args[2], int(args[3]), int(args[4])
out = os.environ.get("OUT", "/tmp/vram-out")
here = os.path.dirname(os.path.abspath(__file__))
os.makedirs(d, exist_ok=True)
LISTEN = int(os.environ.get("LLAMA_LISTEN", "11760"))
url = "http://127.0.0.1:%d" % LISTEN
PROMPT = "The history of the transistor begins"
TOKENS = 2000  # a few seconds of generation: long enough to be preempted mid-way


def models():
    """The two GGUF files (or, simulated, nothing to make)."""
    if sim:
        return None, None
    sys.path.insert(0, os.path.join(here, ".."))
    import mkgguf

    a, b = os.path.join(d, "llama1b-f16.gguf"), os.path.join(d, "tiny-f16.gguf")
    if not os.path.exists(b):
        mkgguf.write(b, "tiny", "f16", 1)
    if not os.path.exists(a):
        import numpy as np

        def fast(ts, seed):  # mkgguf's random_data, with numpy (1.2 G weights)
            rng = np.random.default_rng(seed)
            parts = []
            for _name, shape, t in ts:
                cnt = int(np.prod(shape))
                if t == mkgguf.F32:
                    parts.append(np.ones(cnt, dtype=np.float32).tobytes())
                else:  # unit variance through each matmul: finite activations
                    lim = (3.0 / shape[0]) ** 0.5
                    parts.append(rng.uniform(-lim, lim, cnt).astype(np.float16).tobytes())
                pad = -sum(len(p) for p in parts) % 32
                parts.append(b"\0" * pad)
            return b"".join(parts)

        mkgguf.random_data = fast
        mkgguf.write(a, "llama1b", "f16", 7)
    return a, b


def conf(a, b):
    if sim:
        cmd_a = "%s --bytes 256M --chunks 40 --chunk-ms 60" % sim  # --chunks: its tokens
        cmd_b = "%s --bytes 64M --chunks 2 --chunk-ms 10" % sim
        va, vb = 1, 1
    else:
        common = "--host 127.0.0.1 --port ${PORT} -ngl 999 -c 4096 -np 1 --seed 1"
        cmd_a = "%s -m %s %s" % (server, a, common)
        cmd_b = "%s -m %s %s" % (server, b, common)
        va, vb = 6, 2
    sock = os.path.join(d, "vram.sock")
    text = ("[serve]\nsocket = %s\nstate = %s/vram.db\nlogs = %s/llama-logs\n"
            "budget = 0:%dM\nport_base = 24700\nlisten = 127.0.0.1:%d\nwait = 10m\n" %
            (sock, d, out, (va + vb) * 1024 - 512, LISTEN))
    for name, cmd, v, swap in (("a", cmd_a, va, "fast"), ("b", cmd_b, vb, "fast"),
                               ("ad", cmd_a, va, "driver")):
        text += ("\n[model %s]\ncommand = %s\nvram = %dG\ngpu = 0\nswap = %s\nslice = 1s\n"
                 "keep_alive = forever\nstart_timeout = 5m\n" % (name, cmd, v, swap))
    path = os.path.join(d, "vram.conf")
    open(path, "w").write(text)
    return path, sock


def complete(model, tokens, marks=None):
    """The streamed answer of model to the prompt, greedy: its text (the
    tokens' texts; simulated: the events themselves)."""
    body = json.dumps({"model": model, "prompt": PROMPT, "max_tokens": tokens, "temperature": 0,
                       "seed": 1, "stream": True, "cache_prompt": False,
                       "ignore_eos": True}).encode()
    req = urllib.request.Request(url + "/v1/completions", body,
                                 {"Content-Type": "application/json"})
    text = []
    with urllib.request.urlopen(req, timeout=600) as r:
        for line in r:
            line = line.decode().strip()
            if not line.startswith("data:") or line == "data: [DONE]":
                continue
            if marks is not None:
                marks.append(time.perf_counter())
            ev = json.loads(line[5:])
            text.append(ev["choices"][0].get("text", "") if "choices" in ev else json.dumps(ev))
    return "".join(text)


def ps(model):
    p = subprocess.run([vram, "ps", "--json"], capture_output=True, text=True)
    for m in json.loads(p.stdout)["models"]:
        if m["name"] == model:
            return m
    return {}


def v(*a):
    return subprocess.run([vram, *a], capture_output=True, text=True)


fa, fb = models()
path, sock = conf(fa, fb)
os.environ["VRAM_SOCKET"] = sock
daemon = subprocess.Popen([vram, "serve", "--config", path], stdout=open(os.path.join(out, "llama-serve.log"), "w"),
                          stderr=subprocess.STDOUT, start_new_session=True)
res = {"sim": bool(sim), "rounds": [], "same": 0, "preemptions": 0, "fast": [], "driver": [],
       "errors": []}
try:
    for _ in range(300):
        if v("ps").returncode == 0:
            break
        time.sleep(0.1)
    for m in ("b", "a"):  # both started once (b then suspended for a), kernels warm
        r = v("load", m, "--timeout", "10m")
        if r.returncode:
            res["errors"].append("load %s: %s" % (m, r.stdout + r.stderr))
        complete(m, 4)
    ref = complete("a", TOKENS)
    res["reference"] = ref[:200]
    before = ps("a").get("preemptions", 0)
    for i in range(n):
        marks, got = [], {}
        t = threading.Thread(target=lambda: got.update(text=complete("a", TOKENS, marks)))
        t.start()
        while not marks and t.is_alive():
            time.sleep(0.01)
        time.sleep(1.3)  # past a's slice: the next request for b preempts it
        t0 = time.perf_counter()
        complete("b", 8)
        tb = time.perf_counter() - t0
        t.join()
        gaps = [y - x for x, y in zip(marks, marks[1:])]
        same = got.get("text") == ref
        res["same"] += same
        res["rounds"].append({"same": same, "b_s": tb, "longest_gap_s": max(gaps or [0])})
    res["preemptions"] = ps("a").get("preemptions", 0) - before
    for model, key in (("a", "fast"), ("ad", "driver")):
        v("load", model, "--timeout", "10m")
        complete(model, 4)
        for i in range(nd):
            r1 = v("suspend", model)
            out_of = ps(model)  # while suspended: what left, and how
            r2 = v("resume", model)
            m = ps(model)
            ok = complete(model, TOKENS) == ref
            res[key].append({"out_s": m.get("last_suspend_s"), "in_s": m.get("last_resume_s"),
                             "bytes": out_of.get("host_bytes"), "how": out_of.get("suspended_by"),
                             "same": ok, "rc": [r1.returncode, r2.returncode]})
finally:
    daemon.terminate()
    try:
        daemon.wait(timeout=60)
    except subprocess.TimeoutExpired:
        daemon.kill()
json.dump(res, open(os.path.join(out, "llama.json"), "w"), indent=1)


def med(xs):
    xs = sorted(x for x in xs if x is not None)
    return xs[len(xs) // 2] if xs else None


print("llama-server, %d suspends mid-generation by fast swap (time slices): answers identical "
      "%d/%d, preemptions %d, longest pause in a's stream (median) %s s" % (
          n, res["same"], n, res["preemptions"],
          "%.2f" % med([r["longest_gap_s"] for r in res["rounds"]]) if res["rounds"] else "-"))
for key in ("fast", "driver"):
    rows = res[key]
    o, i = med([r["out_s"] for r in rows]), med([r["in_s"] for r in rows])
    b = med([r["bytes"] for r in rows])
    how = ",".join(sorted(set(str(r["how"]) for r in rows)))
    print("  idle %-6s x%d (%s): out %s s, in %s s, %s GiB, answers identical %d/%d" % (
        key, len(rows), how, "%.2f" % o if o else "-", "%.2f" % i if i else "-",
        "%.2f" % (b / (1 << 30)) if b else "-", sum(r["same"] for r in rows), len(rows)))
for e in res["errors"][:3]:
    print("  error: " + e[:300])
