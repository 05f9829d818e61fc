"""swap_model: a PyTorch process holding GIB GiB of random fp16 weights, for
fast swap's GPU checks (bench/gpu/swap_bench.py drives it over stdin).

Commands, one per line; each answer is one line on stdout:
  check         -> "ok S1 S2 MM": two integer checksums over every weight
                   byte and a matmul result compared with the first ones;
                   "BAD ..." if anything differs
  save PATH     -> writes the weights as a safetensors file
  reload PATH   -> drops the weights, loads them again from PATH onto the
                   GPU, "reload SECONDS" then checks
  stats         -> "stats MATMULS ALLOCS" from the --busy threads
With --busy, two threads keep the GPU working the whole time: one runs a
matmul and compares it bit for bit with its first result, one allocates,
fills, checks and frees tensors. A mismatch prints "BAD ..." and exits 1.
"""
import argparse, os, sys, threading, time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--gib", type=float, required=True)
ap.add_argument("--busy", action="store_true")
a = ap.parse_args()

CH = 256 << 20  # bytes per weight tensor
dev = torch.device("cuda:0")
g = torch.Generator(device=dev).manual_seed(1234)
n = int(a.gib * (1 << 30)) // CH
weights = [torch.randn(CH // 2, dtype=torch.float16, device=dev, generator=g) for _ in range(n)]
x = torch.randn(64, 4096, dtype=torch.float16, device=dev, generator=g)


def sums():
    s1 = s2 = 0
    for w in weights:
        v = w.view(torch.int32).to(torch.int64)
        s1 += int(v.sum())
        s2 += int((v * v).sum())  # wraps mod 2^64 identically each time
    mm = x @ weights[0][: 4096 * 4096].view(4096, 4096)
    return s1, s2, mm


ref1, ref2, refmm = sums()
torch.cuda.synchronize()
stop = False
count = {"mm": 0, "alloc": 0}


def bad(msg):
    print("BAD " + msg, flush=True)
    os._exit(1)


def matmuls():
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        w = torch.randn(4096, 4096, dtype=torch.float16, device=dev)
        want = x @ w
        while not stop:
            got = x @ w
            if not torch.equal(got, want):
                bad("matmul differs while running")
            count["mm"] += 1


def allocs():
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        i = 0
        while not stop:
            t = torch.full((8 << 20,), i % 251, dtype=torch.uint8, device=dev)
            if int(t[12345]) != i % 251 or int(t[-1]) != i % 251:
                bad("fresh tensor differs")
            del t
            i += 1
            count["alloc"] += 1


threads = [threading.Thread(target=f, daemon=True) for f in (matmuls, allocs)] if a.busy else []
for t in threads:
    t.start()

print("ready %d %d" % (os.getpid(), n * CH), flush=True)
for line in sys.stdin:
    cmd = line.split()
    if not cmd:
        continue
    if cmd[0] == "check":
        s1, s2, mm = sums()
        ok = s1 == ref1 and s2 == ref2 and torch.equal(mm, refmm)
        print(("ok %d %d 1" if ok else "BAD %d %d 0") % (s1, s2), flush=True)
    elif cmd[0] == "save":
        from safetensors.torch import save_file
        save_file({"w%d" % i: w for i, w in enumerate(weights)}, cmd[1])
        print("saved", flush=True)
    elif cmd[0] == "reload":
        from safetensors.torch import load_file
        weights.clear()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        t0 = time.perf_counter()
        d = load_file(cmd[1], device="cuda:0")
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        weights.extend(d["w%d" % i] for i in range(n))
        print("reload %.3f" % dt, flush=True)
    elif cmd[0] == "stats":
        print("stats %d %d" % (count["mm"], count["alloc"]), flush=True)
    elif cmd[0] == "quit":
        break
stop = True
for t in threads:  # threads still in CUDA when the interpreter ends abort it
    t.join()
