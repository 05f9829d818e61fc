"""ipc_model: two PyTorch processes sharing one CUDA tensor of GIB GiB by
CUDA IPC (torch.multiprocessing, spawn: the child gets the tensor through a
queue, as engines hand tensors to their workers), for fast swap's GPU check
(bench/gpu/alloc_bench.py drives it over stdin, under `vram run --swap`;
the child inherits libvramcap).
Commands, one per line, one answer line each:
  check    -> "ok S C": the parent's and the child's checksums of the whole
              tensor, both the first ones; "BAD S C" otherwise
  write V  -> the child writes V into the tensor's first MiB, the parent
              reads it back: "ok" or "BAD"; the first MiB is then restored
  quit
Prints "ready PID CHILD_PID BYTES" once the child has the tensor.
IPC_STACKS=S: both processes print their Python stacks to stderr every S
seconds (to see where a hang is)."""
import argparse
import faulthandler
import os
import sys

import torch
import torch.multiprocessing as mp


def checksum(t):
    v = t.view(torch.int32).to(torch.int64)
    return int(v.sum()) ^ (int((v * v).sum()) << 1)


def stacks():
    if os.environ.get("IPC_STACKS"):
        faulthandler.dump_traceback_later(float(os.environ["IPC_STACKS"]), repeat=True)


def child(qin, qout):
    stacks()
    t = qin.get()
    torch.cuda.synchronize()
    qout.put(("ready", os.getpid()))
    while True:
        cmd = qin.get()
        if cmd[0] == "check":
            qout.put(checksum(t))
        elif cmd[0] == "write":
            t.view(torch.uint8)[: 1 << 20].fill_(cmd[1])
            torch.cuda.synchronize()
            qout.put("ok")
        elif cmd[0] == "put":
            t.view(torch.uint8)[: 1 << 20].copy_(cmd[1])
            torch.cuda.synchronize()
            qout.put("ok")
        else:
            break


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, required=True)
    a = ap.parse_args()
    stacks()
    dev = torch.device("cuda:0")
    g = torch.Generator(device=dev).manual_seed(1234)
    t = torch.randn(int(a.gib * (1 << 30)) // 2, dtype=torch.float16, device=dev, generator=g)
    torch.cuda.synchronize()
    ref = checksum(t)
    ctx = mp.get_context("spawn")
    qin, qout = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=child, args=(qin, qout))
    p.start()
    qin.put(t)
    _, cpid = qout.get()
    print("ready %d %d %d" % (os.getpid(), cpid, t.numel() * 2), flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "check":
            s = checksum(t)
            qin.put(("check",))
            c = qout.get()
            print(("ok %d %d" if s == ref and c == ref else "BAD %d %d") % (s, c), flush=True)
        elif cmd[0] == "write":
            v = int(cmd[1]) % 256
            first = t.view(torch.uint8)[: 1 << 20].cpu()
            qin.put(("write", v))
            qout.get()
            seen = t.view(torch.uint8)[: 1 << 20]
            ok = bool((seen == v).all())
            qin.put(("put", first))
            qout.get()
            print("ok" if ok else "BAD", flush=True)
        elif cmd[0] == "quit":
            break
    qin.put(("quit",))
    p.join(timeout=60)
