"""Measured VRAM of generate() on decoder models built from config.json with
random weights (no downloads), for checking `vram fit` at short contexts.

One fresh process per config and dtype, as a user's script would be: build
the model on the GPU, then for each CTX (ascending) run model.generate() on a
CTX-token prompt with sampling (top-k, top-p) for 32 new tokens, and read the
process's VRAM from NVML right after (the caching allocator keeps its peak
reservation, so this is the peak plus the CUDA context and every library
kernel generate loaded). Then, at the same CTX, the caching allocator is
emptied and one plain forward (logits for the last position, as
bench/gpu/fit_measure.py measures) is read the same way.
usage: fit_generate.py CONFIG.json bf16|fp32 CTX... ; one JSON line each."""
import ctypes
import json
import os
import sys

import torch
from transformers import AutoConfig, AutoModelForCausalLM

nv = ctypes.CDLL("libnvidia-ml.so.1")
nv.nvmlInit_v2()
dev = ctypes.c_void_p()
nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev))


class Proc(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("used", ctypes.c_ulonglong),
                ("gi", ctypes.c_uint), ("ci", ctypes.c_uint)]


def nvml_used():
    arr, n = (Proc * 64)(), ctypes.c_uint(64)
    nv.nvmlDeviceGetComputeRunningProcesses_v3(dev, ctypes.byref(n), arr)
    return next((arr[i].used for i in range(n.value) if arr[i].pid == os.getpid()), 0)


path, dname, ctxs = sys.argv[1], sys.argv[2], [int(c) for c in sys.argv[3:]]
dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[dname]
cfg = AutoConfig.from_pretrained(path)
name = os.path.basename(path)[:-5]
torch.cuda.init()
torch.empty(1, device="cuda")
ctx_only = nvml_used()
with torch.device("cuda"):
    model = AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype)
model.eval()
params = sum(p.numel() for p in model.parameters())
attn = getattr(model.config, "_attn_implementation", "?")
torch.cuda.synchronize()
weights = torch.cuda.memory_allocated()


def emit(**kw):
    kw.update(config=name, dtype=dname, params=params, attn=attn, context_only=ctx_only,
              weights_allocated=weights, peak_reserved=torch.cuda.max_memory_reserved(),
              peak_allocated=torch.cuda.max_memory_allocated())
    print(json.dumps(kw), flush=True)


for ctx in ctxs:
    ids = torch.randint(0, cfg.vocab_size, (1, ctx), device="cuda")
    for mode in ("generate", "infer"):
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        try:
            with torch.no_grad():
                if mode == "generate":
                    model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=32,
                                   min_new_tokens=32, do_sample=True, top_k=50, top_p=0.95, pad_token_id=0)
                else:
                    model(input_ids=ids, use_cache=True, logits_to_keep=1)
            torch.cuda.synchronize()
            emit(mode=mode, ctx=ctx, measured=nvml_used())
        except torch.OutOfMemoryError:
            emit(mode=mode, ctx=ctx, measured=None, oom=True)
