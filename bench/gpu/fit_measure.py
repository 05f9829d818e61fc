"""Measured VRAM of decoder models built from config.json with random
weights (no downloads), for checking `vram fit`'s estimates.

For one config and dtype, in one process: inference as generate() does for
the prompt (one forward over CTX tokens, batch 1, building the KV cache,
logits for the last position only) at each CTX, then one AdamW training
step (batch 1, seq 1024, loss over all positions, parameters in the model's
dtype). Before each, the caching allocator is emptied; right after each,
the process's VRAM is read from NVML: the allocator's peak reservation plus
the CUDA context and libraries, what a fresh process would show.
usage: fit_measure.py CONFIG.json bf16|fp32 CTX... ; one JSON line each."""
import ctypes, json, os, sys, time
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
t0 = time.time()
with torch.device("cuda"):
    model = AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype)
model.eval()
params = sum(p.numel() for p in model.parameters())
attn = getattr(model.config, "_attn_implementation", "?")


def emit(**kw):
    kw.update(config=name, dtype=dname, params=params, attn=attn, context_only=ctx_only,
              weights_allocated=weights)
    print(json.dumps(kw), flush=True)


torch.cuda.synchronize()
weights = torch.cuda.memory_allocated()
for ctx in ctxs:
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    ids = torch.randint(0, cfg.vocab_size, (1, ctx), device="cuda")
    try:
        with torch.no_grad():
            out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
        torch.cuda.synchronize()
        emit(mode="infer", ctx=ctx, measured=nvml_used(), peak_reserved=torch.cuda.max_memory_reserved(),
             peak_allocated=torch.cuda.max_memory_allocated(), reserved=torch.cuda.memory_reserved())
        del out
    except torch.OutOfMemoryError:
        emit(mode="infer", ctx=ctx, measured=None, oom=True)
    del ids
torch.cuda.empty_cache()
torch.cuda.reset_peak_memory_stats()
model.train()
ids = torch.randint(0, cfg.vocab_size, (1, 1024), device="cuda")
try:
    opt = torch.optim.AdamW(model.parameters())
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    torch.cuda.synchronize()
    emit(mode="train", ctx=1024, measured=nvml_used(), peak_reserved=torch.cuda.max_memory_reserved(),
         peak_allocated=torch.cuda.max_memory_allocated(), reserved=torch.cuda.memory_reserved())
except torch.OutOfMemoryError:
    emit(mode="train", ctx=1024, measured=None, oom=True, peak_reserved=torch.cuda.max_memory_reserved())
