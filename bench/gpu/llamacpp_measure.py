"""Measured VRAM of llama-server processes, for checking `vram fit --runtime
llamacpp`.

For each case (a GGUF made by bench/mkgguf.py, a context, the KV cache type,
flash attention on or off, how many layers on the GPU): start llama-server,
wait until it answers /health, read its VRAM from NVML ("ready"), send one
prompt that fills 90% of the context and generates 4 tokens, read it again
("after") and keep the highest figure NVML showed while it ran ("peak"); then
stop it and keep the buffer sizes its log printed. Several servers run at
once (each process's VRAM is its own in NVML), as many as the GPU holds.

usage: llamacpp_measure.py LLAMA_SERVER GGUF_DIR OUT_DIR [SECONDS] [CASES]
  SECONDS  stop starting new cases after this long (default 300); running
           ones get GRACE seconds more (environment, default 90)
  CASES    'all' (default) or a comma-separated list of case names, such as
           llama8b-q4_k_m-c16384-faoff-kvf16-ngl20 (any context and -ngl)
One JSON line per case on stdout and in OUT_DIR/llamacpp.jsonl; the servers'
logs in OUT_DIR/logs/."""
import ctypes
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mkgguf  # noqa: E402

server, gguf_dir, out_dir = sys.argv[1], sys.argv[2], sys.argv[3]
budget_s = float(sys.argv[4]) if len(sys.argv) > 4 else 300
only = sys.argv[5].split(",") if len(sys.argv) > 5 and sys.argv[5] != "all" else None
grace_s = float(os.environ.get("GRACE", 90))  # how long running cases may go on past the budget
os.makedirs(os.path.join(out_dir, "logs"), exist_ok=True)
t_start = time.time()


def left_s():
    """Seconds a running case may still take: the budget and 90 s of grace."""
    return max(5.0, budget_s + grace_s - (time.time() - t_start))

try:
    nv = ctypes.CDLL("libnvidia-ml.so.1")
    nv.nvmlInit_v2()
    dev = ctypes.c_void_p()
    nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev))
except OSError:  # a dry run of the script on a machine without the driver
    nv = None


class Proc(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("used", ctypes.c_ulonglong),
                ("gi", ctypes.c_uint), ("ci", ctypes.c_uint)]


class Mem(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


lock = threading.Lock()
now_used, peak_used = {}, {}


def sampler():
    if nv is None:
        return
    arr = (Proc * 256)()
    while True:
        n = ctypes.c_uint(256)
        if nv.nvmlDeviceGetComputeRunningProcesses_v3(dev, ctypes.byref(n), arr) == 0:
            with lock:
                now_used.clear()
                for i in range(n.value):
                    now_used[arr[i].pid] = arr[i].used
                    peak_used[arr[i].pid] = max(peak_used.get(arr[i].pid, 0), arr[i].used)
        time.sleep(0.02)


threading.Thread(target=sampler, daemon=True).start()


def gpu_free():
    if nv is None:
        return 64 << 30
    m = Mem()
    nv.nvmlDeviceGetMemoryInfo(dev, ctypes.byref(m))
    return m.free


SETS = [("qwen05b", "f16"), ("llama1b", "q4_k_m"), ("gemma2b", "q4_k_m"), ("llama8b", "q4_k_m"),
        ("qwen7b", "q4_k_m"), ("llama8b", "f16"), ("llama1b", "q8_0"), ("gemma2b", "f16"),
        ("llama8b", "q8_0"), ("qwen05b", "q4_k_m")]
# measured first when time is short: every model, each kind of buffer
FIRST = ["qwen05b-f16-c2048-faon-kvf16-ngl999", "qwen05b-f16-c2048-faoff-kvf16-ngl999",
         "qwen05b-f16-c32768-faon-kvq8_0-ngl999", "qwen05b-f16-c8192-faoff-kvf16-ngl12",
         "qwen05b-f16-c2048-faon-kvf16-ngl0",
         "llama1b-q4_k_m-c2048-faon-kvf16-ngl999", "llama1b-q4_k_m-c8192-faoff-kvf16-ngl999",
         "llama1b-q4_k_m-c32768-faon-kvq8_0-ngl999", "llama1b-q4_k_m-c32768-faoff-kvf16-ngl999",
         "llama1b-q4_k_m-c8192-faon-kvf16-ngl8",
         "gemma2b-q4_k_m-c2048-faon-kvf16-ngl999", "gemma2b-q4_k_m-c8192-faoff-kvf16-ngl999",
         "gemma2b-q4_k_m-c32768-faon-kvq8_0-ngl999", "gemma2b-q4_k_m-c32768-faoff-kvf16-ngl999",
         "gemma2b-q4_k_m-c8192-faon-kvf16-ngl13",
         "llama8b-q4_k_m-c2048-faon-kvf16-ngl999", "llama8b-q4_k_m-c8192-faoff-kvf16-ngl999",
         "llama8b-q4_k_m-c32768-faon-kvq8_0-ngl999", "llama8b-q4_k_m-c32768-faoff-kvf16-ngl999",
         "llama8b-q4_k_m-c8192-faon-kvf16-ngl16", "llama8b-q4_k_m-c32768-faon-kvq8_0-ngl8",
         "qwen7b-q4_k_m-c8192-faon-kvf16-ngl999", "qwen7b-q4_k_m-c32768-faoff-kvf16-ngl999",
         "llama8b-f16-c8192-faon-kvf16-ngl999", "llama8b-f16-c2048-faoff-kvf16-ngl999",
         "llama1b-q8_0-c8192-faon-kvf16-ngl999", "llama1b-q8_0-c8192-faoff-kvf16-ngl999"]


def cases():
    """Per model and quantization: full offload at 2k/8k/32k with f16 KV
    (flash attention on and off) and q8_0 KV (flash attention on: llama.cpp
    needs it for a quantized V cache), and three partial offloads; the cases
    of FIRST lead."""
    out = []
    for model, quant in SETS:
        n = mkgguf.MODELS[model]["layers"]
        full = [(ctx, fa, kv, 999) for ctx in (2048, 8192, 32768)
                for fa, kv in (("on", "f16"), ("off", "f16"), ("on", "q8_0"))]
        part = [(8192, "on", "f16", n // 2), (8192, "off", "f16", n // 2), (32768, "on", "q8_0", n // 4)]
        extra = [(2048, "on", "f16", 0)] if (model, quant) == ("qwen05b", "f16") else []
        for ctx, fa, kv, ngl in full + part + extra:
            out.append(dict(model=model, quant=quant, ctx=ctx, fa=fa, kv=kv, ngl=ngl,
                            name=f"{model}-{quant}-c{ctx}-fa{fa}-kv{kv}-ngl{ngl}"))
    out.sort(key=lambda c: FIRST.index(c["name"]) if c["name"] in FIRST else len(FIRST))
    if not only:
        return out
    return [named(n) for n in only]


def named(name):
    """A case from its name, MODEL-QUANT-cCTX-faON|OFF-kvTYPE-nglN: any context,
    any -ngl, for held-out checks."""
    m = re.fullmatch(r"(\w+)-(f16|q8_0|q4_k_m)-c(\d+)-fa(on|off)-kv(f16|q8_0|q4_0)-ngl(\d+)", name)
    if not m or m.group(1) not in mkgguf.MODELS:
        sys.exit(f"llamacpp_measure: {name}: not a case name (MODEL-QUANT-cCTX-faon-kvf16-nglN)")
    return dict(model=m.group(1), quant=m.group(2), ctx=int(m.group(3)), fa=m.group(4),
                kv=m.group(5), ngl=int(m.group(6)), name=name)


def guess_bytes(c):
    """A generous guess of the case's VRAM, only to decide how many run at once."""
    m = mkgguf.MODELS[c["model"]]
    size = os.path.getsize(os.path.join(gguf_dir, f"{c['model']}-{c['quant']}.gguf"))
    kv = 2 * m["layers"] * m["kv"] * m.get("head_dim", m["hidden"] // m["heads"]) * c["ctx"] * 2
    attn = 0 if c["fa"] == "on" else 3 * c["ctx"] * 512 * m["heads"] * 4
    return size * 1.1 + kv + attn + 3 * 2**30


BUF = re.compile(r"(\S+) (model|KV|compute|RS) buffer size =\s*([\d.]+) MiB")


def parse_log(text):
    bufs = {}
    for dev_name, kind, mib in BUF.findall(text):
        key = f"{dev_name} {kind}"
        bufs[key] = bufs.get(key, 0) + int(float(mib) * 2**20)
    info = {"buffers": bufs}
    for key, pat in (("n_ctx", r"n_ctx\s+=\s*(\d+)"), ("n_ubatch", r"n_ubatch\s+=\s*(\d+)"),
                     ("n_seq_max", r"n_seq_max\s+=\s*(\d+)"), ("offloaded", r"offloaded (\d+/\d+) layers"),
                     ("flash_attn", r"flash_attn\s+=\s*(\S+)")):
        m = re.search(pat, text)
        if m:
            info[key] = m.group(1)
    breakdown = [l for l in text.splitlines() if "memory_breakdown" in l]
    if breakdown:
        info["breakdown"] = breakdown
    return info


def post(port, body, timeout):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/completion", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def run(c, port):
    m = mkgguf.MODELS[c["model"]]
    path = os.path.join(gguf_dir, f"{c['model']}-{c['quant']}.gguf")
    log_path = os.path.join(out_dir, "logs", c["name"] + ".log")
    args = [server, "-m", path, "-c", str(c["ctx"]), "-ngl", str(c["ngl"]), "-fa", c["fa"],
            "-ctk", c["kv"], "-ctv", c["kv"], "--host", "127.0.0.1", "--port", str(port),
            "-t", "4", "--fit", "off", "-lv", "4"]
    rec = dict(c, args=" ".join(args[1:]), file_bytes=os.path.getsize(path))
    t0 = time.time()
    with open(log_path, "w") as log:
        p = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.time() + min(180, left_s())
        while time.time() < deadline and p.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except Exception:
                pass
            time.sleep(0.1)
        if p.poll() is not None or time.time() >= deadline:
            rec["error"] = "did not start"
            return rec
        time.sleep(0.3)
        with lock:
            rec["ready"] = now_used.get(p.pid, 0)
        rec["start_s"] = round(time.time() - t0, 2)
        n = max(16, int(c["ctx"] * 0.9) - 8)
        rnd = random.Random(c["ctx"])
        prompt = [rnd.randrange(259, m["vocab"]) for _ in range(n)]
        t1 = time.time()
        try:
            r = post(port, {"prompt": prompt, "n_predict": 4, "cache_prompt": False}, left_s())
            rec["prompt_tokens"] = r.get("tokens_evaluated", n)
        except Exception as e:
            rec["error"] = f"request: {e}"
        rec["request_s"] = round(time.time() - t1, 2)
        time.sleep(0.3)
        with lock:
            rec["after"] = now_used.get(p.pid, 0)
            rec["peak"] = peak_used.get(p.pid, 0)
    finally:
        try:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(10)
        except Exception:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    with open(log_path, errors="replace") as f:
        rec.update(parse_log(f.read()))
    return rec


def main():
    todo = cases()
    start, running, results = t_start, {}, []
    out = open(os.path.join(out_dir, "llamacpp.jsonl"), "a")
    port = 23000
    cap_bytes = 0.75 * gpu_free()
    done_lock = threading.Lock()

    def work(c, p):
        rec = run(c, p)
        with done_lock:
            results.append(rec)
            line = json.dumps(rec)
            print(line, flush=True)
            out.write(line + "\n")
            out.flush()
            del running[c["name"]]

    while todo and time.time() - start < budget_s:
        with done_lock:
            used = sum(guess_bytes(x) for x in running.values())
            nrun = len(running)
        # in order, skipping ahead only past cases too big for the room left
        pick = next((c for c in todo[:8] if nrun == 0 or used + guess_bytes(c) <= cap_bytes), None)
        if pick is None or nrun >= 6:
            time.sleep(0.1)
            continue
        todo.remove(pick)
        with done_lock:
            running[pick["name"]] = pick
        port += 1
        threading.Thread(target=work, args=(pick, port)).start()
    while running:
        time.sleep(0.2)
    for c in todo:
        print(json.dumps(dict(c, error="not run: out of time")), flush=True)
    print(f"# {len(results)} cases in {time.time() - start:.0f} s, {len(todo)} not run", file=sys.stderr)


main()
