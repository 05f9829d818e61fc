"""VRAM of a PyTorch model as a user's script runs it, for checking `vram fit`
where bench/gpu/fit_generate.py cannot: that script empties the caching
allocator before it measures, which a user's script never does.

  fit_user.py save CONFIG.json DIR           random weights from config.json,
                                             saved as a checkpoint (on the CPU)
  fit_user.py run DIR bf16|fp32 CTX NAME     a fresh process: from_pretrained
                                             onto the GPU, generate() with
                                             sampling for 32 tokens after a
                                             CTX-token prompt; one JSON line

The figure is the process's peak as NVML shows it from outside (polled every
2 ms on a thread, as nvidia-smi would see it), weights loading included;
"emptied": false tells bench/fit_compare.py to compare it with vram fit's
whole estimate."""
import ctypes
import json
import os
import sys
import threading
import time

import torch
from transformers import AutoConfig, AutoModelForCausalLM

if sys.argv[1] == "save":
    cfg = AutoConfig.from_pretrained(sys.argv[2])
    model = AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.bfloat16)
    model.save_pretrained(sys.argv[3])
    cfg.save_pretrained(sys.argv[3])
    sys.exit(0)

path, dname, ctx, name = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[dname]
nv = ctypes.CDLL("libnvidia-ml.so.1")
nv.nvmlInit_v2()
dev = ctypes.c_void_p()
nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev))


class Proc(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("used", ctypes.c_ulonglong),
                ("gi", ctypes.c_uint), ("ci", ctypes.c_uint)]


def used():
    arr, n = (Proc * 64)(), ctypes.c_uint(64)
    nv.nvmlDeviceGetComputeRunningProcesses_v3(dev, ctypes.byref(n), arr)
    return next((arr[i].used for i in range(n.value) if arr[i].pid == os.getpid()), 0)


peak, stop = [0], threading.Event()


def poll():
    while not stop.is_set():
        peak[0] = max(peak[0], used())
        time.sleep(0.002)


threading.Thread(target=poll, daemon=True).start()
model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=dtype, device_map="cuda")
model.eval()
cfg = model.config
ids = torch.randint(0, cfg.vocab_size, (1, ctx), device="cuda")
row = dict(mode="generate", ctx=ctx, config=name, dtype=dname, emptied=False,
           params=sum(p.numel() for p in model.parameters()),
           attn=getattr(cfg, "_attn_implementation", "?"))
try:
    with torch.no_grad():
        model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=32,
                       min_new_tokens=32, do_sample=True, top_k=50, top_p=0.95, pad_token_id=0)
    torch.cuda.synchronize()
    time.sleep(0.05)
    row.update(measured=max(peak[0], used()), peak_reserved=torch.cuda.max_memory_reserved(),
               reserved_after=torch.cuda.memory_reserved())
except torch.OutOfMemoryError:
    row.update(measured=None, oom=True)
stop.set()
print(json.dumps(row), flush=True)
