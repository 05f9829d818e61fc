"""pin_probe: what pinning host memory inside a model's process does to
its generation (issue 27 (b)). Under `vram serve`, a model readied for its
next suspend pins the daemon's chunks (memfds of 256 MiB, populated by the
daemon) with cuMemHostRegister in its own process, while it may be
serving. This builds the Llama-3.2-3B-shaped model of llm_model.py, then
times 16-token greedy generations back to back while another thread of
the same process:
  idle        does nothing (the baseline)
  populate    maps the chunks' pages into this process (MADV_POPULATE_WRITE)
  pin         populates and registers the chunks back to back (what
              `prepare` does)
  unpin       unregisters them (what `drop` does)
  pin-paced   registers one chunk, then rests as long as that took
Prints one line per case: generations, median and longest generation,
and how long the thread's work took.
  python3 bench/gpu/pin_probe.py [GIB [LAYERS]]
"""
import ctypes, mmap, os, statistics, sys, threading, time

import torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.cache_utils import DynamicCache

GIB = float(sys.argv[1]) if len(sys.argv) > 1 else 11
LAYERS = int(sys.argv[2]) if len(sys.argv) > 2 else 28
CHUNK = 256 << 20
MADV_POPULATE_WRITE = 23

cfg = LlamaConfig(hidden_size=3072, intermediate_size=8192, num_hidden_layers=LAYERS,
                  num_attention_heads=24, num_key_value_heads=8, vocab_size=128256,
                  max_position_embeddings=131072, rope_theta=500000.0, tie_word_embeddings=True,
                  rms_norm_eps=1e-5)
torch.manual_seed(1)
with torch.device("cuda"):
    model = LlamaForCausalLM._from_config(cfg, torch_dtype=torch.bfloat16)
model.eval()
PROMPT = torch.arange(100, 164, device="cuda").unsqueeze(0)


def generate(n=16):
    with torch.no_grad():
        cache = DynamicCache()
        out = model(input_ids=PROMPT, past_key_values=cache, use_cache=True)
        for _ in range(n):
            t = int(out.logits[0, -1].argmax())
            out = model(input_ids=torch.tensor([[t]], device="cuda"),
                        past_key_values=out.past_key_values, use_cache=True)


generate(2)
cuda = ctypes.CDLL("libcuda.so.1")
ctx = ctypes.c_void_p()
assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
libc = ctypes.CDLL(None, use_errno=True)
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
cuda.cuMemHostRegister_v2.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint]
cuda.cuMemHostUnregister.argtypes = [ctypes.c_void_p]

# the daemon's side: memfds, populated through a mapping of its own
n = int(GIB * (1 << 30)) // CHUNK
chunks = []
for i in range(n):
    fd = os.memfd_create(f"pool{i}")
    os.ftruncate(fd, CHUNK)
    m = mmap.mmap(fd, CHUNK)
    libc.madvise(ctypes.addressof(ctypes.c_char.from_buffer(m)), CHUNK, MADV_POPULATE_WRITE)
    # the model's own mapping of the same memory
    mine = mmap.mmap(fd, CHUNK)
    chunks.append((m, mine, ctypes.addressof(ctypes.c_char.from_buffer(mine))))
    os.close(fd)


def work(kind, done):
    cuda.cuCtxSetCurrent(ctx)
    t0 = time.perf_counter()
    for _, _, p in chunks:
        t = time.perf_counter()
        if kind in ("populate", "pin", "pin-paced"):
            libc.madvise(p, CHUNK, MADV_POPULATE_WRITE)
        if kind in ("pin", "pin-paced"):
            rc = cuda.cuMemHostRegister_v2(p, CHUNK, 1)
            assert rc == 0, rc
        if kind == "unpin":
            cuda.cuMemHostUnregister(p)
        if kind == "pin-paced":
            time.sleep(time.perf_counter() - t)
    done.append(time.perf_counter() - t0)


print(f"pin_probe: {LAYERS} layers, {torch.cuda.memory_allocated() / 2**30:.2f} GiB on the GPU, "
      f"{n} chunks of 256 MiB ({n * CHUNK / 2**30:.1f} GiB)", flush=True)
print(f"{'case':<10} {'gens':>4} {'gen_p50_s':>9} {'gen_max_s':>9} {'work_s':>7}", flush=True)
for kind in ["idle", "populate", "pin", "unpin", "idle", "pin-paced", "unpin"]:
    done, times = [], []
    th = threading.Thread(target=work, args=(kind, done))
    start = time.perf_counter()
    th.start()
    # generations until the thread is done, and at least 4 s of them
    while th.is_alive() or time.perf_counter() - start < 4:
        t = time.perf_counter()
        generate()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    th.join()
    print(f"{kind:<10} {len(times):>4} {statistics.median(times):>9.3f} {max(times):>9.3f} "
          f"{done[0]:>7.3f}", flush=True)
