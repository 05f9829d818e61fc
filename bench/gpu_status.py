#!/usr/bin/env python3
"""All real-GPU checks of `vram status` / `vram top` (issue 2), in one run.

Starts a PyTorch process holding GPU memory and an EGL (graphics) process,
then checks that `vram status --json` agrees with nvidia-smi to the MiB and
classifies the EGL process as display/graphics; then times `vram status
--json` against nvidia-smi's equivalent queries, side by side, interleaved,
and measures the CPU cost of one `vram top` sample. Logs go to $OUT; a short
table is printed last.

usage: OUT=dir python3 bench/gpu_status.py [BUILD_DIR]
"""
import json, os, statistics, subprocess, sys, time

B = sys.argv[1] if len(sys.argv) > 1 else ".devbuild"
OUT = os.environ.get("OUT", "/tmp/vram-out")
os.makedirs(OUT, exist_ok=True)
VRAM = os.path.join(B, "vram")
MiB = 1 << 20
rows = []  # (check, result, detail)
log = open(os.path.join(OUT, "issue2.log"), "w")


def say(*a):
    print(*a, file=log, flush=True)


def sh(cmd):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    say("$", cmd, "->", r.returncode)
    say(r.stdout.strip()[:4000])
    if r.stderr.strip():
        say("stderr:", r.stderr.strip()[:2000])
    return r


def check(name, ok, detail):
    rows.append((name, "PASS" if ok else "FAIL", detail))


def start(cmd, env=None):
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, env=env)
    line = p.stdout.readline()
    say("started", cmd, "->", line.strip())
    if not line.startswith("ready"):
        say(p.stdout.read()[:2000] if p.poll() is not None else "(still running)")
        return None
    return p


sh("nvidia-smi")
sh("nvidia-smi --query-gpu=driver_version,name,memory.total,memory.reserved,memory.used,memory.free --format=csv")

torch_holder = start([sys.executable, "-c", """
import torch, sys, os
x = torch.empty(6 << 30, dtype=torch.uint8, device='cuda'); x.fill_(1)
torch.cuda.synchronize()
print('ready', os.getpid(), flush=True)
sys.stdin.read()
"""])
egl = start([os.path.join(B, "egl_hold")])

r = sh(f"{VRAM} status --json")
smi_gpu = sh("nvidia-smi --query-gpu=index,memory.total,memory.reserved,memory.used,memory.free "
             "--format=csv,noheader,nounits")
smi_apps = sh("nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits")
sh(f"{VRAM} status --processes")
with open(os.path.join(OUT, "status.json"), "w") as f:
    f.write(r.stdout)

doc = json.loads(r.stdout)
g = doc["gpus"][0]
idx, tot, res, used, free = [int(v) for v in smi_gpu.stdout.splitlines()[0].split(",")]
mem = g["memory"]
def mib(b):  # nvidia-smi rounds partial MiB up (seen: 615.06 MiB printed as 616)
    return -(-b // MiB)


check("total MiB = nvidia-smi", mib(mem["total"]) == tot, f"{mib(mem['total'])} vs {tot}")
check("reserved MiB = nvidia-smi", mem["reserved"] is not None and mib(mem["reserved"]) == res,
      f"{mib(mem['reserved'] or 0)} vs {res}")
check("used MiB = nvidia-smi", mib(mem["used"]) == used,
      f"{mib(mem['used'])} vs {used} (api {mem['api']})")
b = g["breakdown"]
# nvmlDeviceGetDriverModel is Windows's: a Linux driver must say NOT_SUPPORTED,
# or vram would print a driver model (and WDDM notes) on Linux
check("no Windows driver model on Linux", all(g.get("driver_model") is None for g in doc["gpus"]),
      str([g.get("driver_model") for g in doc["gpus"]]))
check("breakdown adds up to total",
      sum(b[k] for k in ("reserved", "display", "workloads", "other", "unattributed", "free"))
      == mem["total"], "bytes")
procs = {p["pid"]: p for p in g["processes"] or []}
apps = {int(l.split(",")[0]): int(l.split(",")[1]) for l in smi_apps.stdout.splitlines() if l}
if torch_holder:
    tp = torch_holder.pid
    p = procs.get(tp)
    check("PyTorch process listed, MiB = nvidia-smi",
          p is not None and tp in apps and mib(p["used"]) == apps[tp],
          f"{mib((p or {}).get('used', 0))} vs {apps.get(tp)} MiB, role {(p or {}).get('role')}")
    check("PyTorch process is a compute workload",
          p is not None and p["role"] == "workload" and "compute" in p["type"],
          f"{(p or {}).get('type')}/{(p or {}).get('role')} user {(p or {}).get('user')}")
else:
    check("PyTorch process started", False, "see issue2.log")
if egl:
    p = procs.get(egl.pid)
    check("EGL process classified display/graphics",
          p is not None and p["role"] == "display" and "graphics" in p["type"],
          f"{(p or {}).get('type')}/{(p or {}).get('role')} {(p or {}).get('used', 0) // MiB} MiB")
else:
    check("EGL process started", False, "see issue2.log (no EGL on this machine?)")

# --- benchmark: whole-process time, interleaved, medians -----------------
cmds = {
    "vram status --json": f"{VRAM} status --json",
    "vram status --json --all": f"{VRAM} status --json --all",
    "vram status --json --all --energy": f"{VRAM} status --json --all --energy",
    "nvidia-smi --query-gpu (--all's GPU fields)":
        "nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,memory.total,memory.reserved,"
        "memory.used,memory.free,utilization.gpu,utilization.memory,power.draw,power.limit,"
        "temperature.gpu,pstate,persistence_mode,compute_mode,display_mode,display_active,"
        "pcie.link.gen.current,pcie.link.width.current --format=csv",
    "nvidia-smi --query-compute-apps": "nvidia-smi --query-compute-apps=pid,process_name,"
                                       "used_memory --format=csv",
    "nvidia-smi -L (the least it can do)": "nvidia-smi -L",
    "nvidia-smi (default table)": "nvidia-smi",
}
N = 30
wall = {k: [] for k in cmds}
cpu = {k: [] for k in cmds}
for i in range(N + 2):
    for k, c in cmds.items():
        t0 = time.perf_counter()
        pr = subprocess.Popen(c.split(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(pr.pid, 0)
        pr.returncode = os.waitstatus_to_exitcode(status)
        if pr.returncode != 0:
            say(f"bench: {c} exited {pr.returncode}")
            check(f"bench command runs: {k}", False, f"exit {pr.returncode}")
        dt = time.perf_counter() - t0
        if i >= 2:  # two warm-up rounds
            wall[k].append(dt * 1e3)
            cpu[k].append((ru.ru_utime + ru.ru_stime) * 1e3)
bench = []
base = statistics.median(wall["vram status --json"])
for k in cmds:
    mw, mc = statistics.median(wall[k]), statistics.median(cpu[k])
    bench.append((k, mw, statistics.quantiles(wall[k], n=10)[-1], mc, mw / base))
    say(f"bench {k}: wall median {mw:.2f} ms, p90 {bench[-1][2]:.2f}, cpu median {mc:.2f} ms")

sc = sh(f"{os.path.join(B, 'vram-sample-cost')} 2000")

if torch_holder:
    torch_holder.kill()
if egl:
    egl.kill()

with open(os.path.join(OUT, "bench.json"), "w") as f:
    json.dump({"wall_ms": wall, "cpu_ms": cpu}, f)

print(f"\nwhole-process time, {N} interleaved runs each (GPU: {g['name']}, driver "
      f"{doc['driver']['version']})")
print(f"{'command':44} {'wall med ms':>11} {'wall p90':>9} {'cpu med ms':>10} {'x vram':>7}")
for k, mw, p90, mc, ratio in bench:
    print(f"{k:44} {mw:11.2f} {p90:9.2f} {mc:10.2f} {ratio:7.2f}")
print("\nvram top sample cost (CPU):")
print(sc.stdout.strip())
print(f"\n{'check':46} {'result':6} detail")
for name, res_, detail in rows:
    print(f"{name:46} {res_:6} {detail}")
