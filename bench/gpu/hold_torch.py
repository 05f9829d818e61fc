"""hold_torch: a PyTorch process holding GIB of GPU memory; with --busy it
keeps the GPU working (matmuls), without it it only holds the memory.
Prints "ready PID" once allocated. For the idle checks of bench/gpu_reclaim.sh."""
import argparse, os, sys, time
import torch

ap = argparse.ArgumentParser()
ap.add_argument("--gib", type=float, default=2)
ap.add_argument("--busy", action="store_true")
a = ap.parse_args()
held = torch.empty(int(a.gib * (1 << 30)), dtype=torch.uint8, device="cuda")
x = torch.randn(4096, 4096, device="cuda")
torch.cuda.synchronize()
print("ready", os.getpid(), flush=True)
while True:
    if a.busy:
        for _ in range(20):
            x = (x @ x).clamp_(-1, 1)
        torch.cuda.synchronize()
        time.sleep(0.05)
    else:
        time.sleep(1)
