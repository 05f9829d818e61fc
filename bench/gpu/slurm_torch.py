#!/usr/bin/env python3
"""slurm_torch.py: one PyTorch job of bench/gpu_slurm.sh, run by Slurm
under vram's SPANK plugin. It fills its GPU with 256 MiB tensors until
PyTorch's own allocation fails (the cap, under --vram), writes a pattern in
each, with --past tries 1 GiB more, says it is ready (a file), waits for
the go (another file: its neighbour is at its cap too), checks every byte,
and writes what it saw as JSON."""
import argparse
import json
import os
import time

import torch

STEP = 256 << 20

p = argparse.ArgumentParser()
p.add_argument("--name", required=True)
p.add_argument("--out", required=True)
p.add_argument("--ready", required=True)
p.add_argument("--go", required=True)
p.add_argument("--past", action="store_true")
p.add_argument("--timeout", type=float, default=300)
a = p.parse_args()

res = {"name": a.name, "pid": os.getpid(), "slurm_job": os.environ.get("SLURM_JOB_ID"),
       "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
       "capped": "libvramcap" in os.environ.get("LD_PRELOAD", "")}
t0 = time.time()
free0, total = torch.cuda.mem_get_info()
res.update(total=total, free0=free0, init_s=time.time() - t0)
chunks = []
t1 = time.time()
oom = None
while True:
    try:
        x = torch.empty(STEP, dtype=torch.uint8, device="cuda")
    except torch.OutOfMemoryError as e:
        oom = type(e).__name__
        break
    x.fill_(len(chunks) % 251)
    chunks.append(x)
torch.cuda.synchronize()
res.update(fill_s=time.time() - t1, held=len(chunks) * STEP, fill_ended_by=oom,
           reserved=torch.cuda.memory_reserved())
if a.past:
    try:
        y = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
        y.fill_(1)
        res["past"] = "allocated"
        del y
    except torch.OutOfMemoryError as e:
        res["past"] = type(e).__name__
with open(a.ready, "w") as f:
    f.write(str(os.getpid()))
deadline = time.time() + a.timeout
while not os.path.exists(a.go) and time.time() < deadline:
    time.sleep(0.05)
res["go"] = os.path.exists(a.go)
t2 = time.time()
# in slices: at its cap a job has no room for a whole chunk's comparison
# (256 MiB of booleans), and the check must not end by the job's own OOM
SLICE = 16 << 20
bad = [i for i, c in enumerate(chunks)
       if any(bool((c[o:o + SLICE] != (i % 251)).any()) for o in range(0, STEP, SLICE))]
torch.cuda.synchronize()
res.update(check_s=time.time() - t2, intact=not bad, bad_chunks=len(bad),
           max_reserved=torch.cuda.max_memory_reserved())
with open(a.out, "w") as f:
    json.dump(res, f)
print(json.dumps(res))
