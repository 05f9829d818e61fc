"""duplex: what the copy engines give when one copy goes out of VRAM and
another comes in at the same time, as in an overlapped switch (issue 15).
Each case copies GIB GiB per direction in 64 MiB pieces over 4 streams, as
libvramcap's fast swap does, and prints GB/s per direction:
  alone        one process, out then in, one at a time
  one-process  one process, out and in at the same time (two sets of streams)
  two-process  two processes (one context each), one out, one in, started
               together: an overlapped switch's shape
  two-memfd    the same, host memory from one memfd each maps a half of and
               registers (the daemon's shared pool), not cudaHostAlloc
usage: python3 duplex.py [GIB] [CASES...]"""
import mmap
import multiprocessing as mp
import os
import sys
import time

import torch

PIECE = 64 << 20
STREAMS = 4


def buffers(n, fd=None, off=0):
    dev = torch.empty(n, dtype=torch.uint8, device="cuda")
    dev.fill_(7)
    if fd is None:
        return dev, torch.empty(n, dtype=torch.uint8, pin_memory=True), None
    mm = mmap.mmap(fd, n, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE, offset=off)
    host = torch.frombuffer(mm, dtype=torch.uint8)
    host.fill_(3)  # fault the pages in, as the daemon does
    rc = torch.cuda.cudart().cudaHostRegister(host.data_ptr(), n, 0)
    assert int(rc) == 0, f"cudaHostRegister: {rc}"
    return dev, host, mm


def copy(dev, host, out, streams):
    for i, off in enumerate(range(0, dev.numel(), PIECE)):
        with torch.cuda.stream(streams[i % STREAMS]):
            if out:
                host[off:off + PIECE].copy_(dev[off:off + PIECE], non_blocking=True)
            else:
                dev[off:off + PIECE].copy_(host[off:off + PIECE], non_blocking=True)


def timed(dev, host, out, streams):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    copy(dev, host, out, streams)
    torch.cuda.synchronize()
    return t0, time.perf_counter()


def rate(n, t0, t1):
    return n / (t1 - t0) / 1e9


def case_alone(n):
    dev, host, _ = buffers(n)
    s = [torch.cuda.Stream() for _ in range(STREAMS)]
    timed(dev[:PIECE * 4], host[:PIECE * 4], True, s)  # warm
    a = timed(dev, host, True, s)
    b = timed(dev, host, False, s)
    return rate(n, *a), rate(n, *b), a[1] - a[0] + b[1] - b[0]


def case_one_process(n):
    d1, h1, _ = buffers(n)
    d2, h2, _ = buffers(n)
    so = [torch.cuda.Stream() for _ in range(STREAMS)]
    si = [torch.cuda.Stream() for _ in range(STREAMS)]
    timed(d1[:PIECE * 4], h1[:PIECE * 4], True, so)
    torch.cuda.synchronize()
    ev = {}
    t0 = time.perf_counter()
    # interleave the pieces so that both directions start at once
    for i, off in enumerate(range(0, n, PIECE)):
        with torch.cuda.stream(so[i % STREAMS]):
            h1[off:off + PIECE].copy_(d1[off:off + PIECE], non_blocking=True)
        with torch.cuda.stream(si[i % STREAMS]):
            d2[off:off + PIECE].copy_(h2[off:off + PIECE], non_blocking=True)
    for s in so:
        s.synchronize()
    ev["out"] = time.perf_counter()
    for s in si:
        s.synchronize()
    ev["in"] = time.perf_counter()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    return rate(n, t0, ev["out"]), rate(n, t0, max(ev["in"], ev["out"])), t1 - t0


def worker(n, out, barrier, q, fd_path):
    fd = os.open(fd_path, os.O_RDWR) if fd_path else None
    dev, host, _ = buffers(n, fd, 0 if out else n)
    s = [torch.cuda.Stream() for _ in range(STREAMS)]
    timed(dev[:PIECE * 4], host[:PIECE * 4], out, s)
    barrier.wait()
    q.put((out, *timed(dev, host, out, s)))


def case_two(n, memfd):
    ctx = mp.get_context("spawn")
    barrier, q = ctx.Barrier(2), ctx.Queue()
    path = None
    if memfd:
        fd = os.memfd_create("vram-duplex")
        os.ftruncate(fd, 2 * n)
        path = f"/proc/{os.getpid()}/fd/{fd}"
    ps = [ctx.Process(target=worker, args=(n, d, barrier, q, path)) for d in (True, False)]
    for p in ps:
        p.start()
    r = {}
    for _ in ps:
        out, t0, t1 = q.get()
        r[out] = (t0, t1)
    for p in ps:
        p.join()
    wall = max(r[True][1], r[False][1]) - min(r[True][0], r[False][0])
    skew = abs(r[True][0] - r[False][0])
    return rate(n, *r[True]), rate(n, *r[False]), wall, skew


def main():
    gib = float(sys.argv[1]) if len(sys.argv) > 1 else 8
    cases = sys.argv[2:] or ["alone", "one-process", "two-process", "two-memfd"]
    n = int(gib * (1 << 30)) // PIECE * PIECE
    print(f"duplex: {n / (1 << 30):.1f} GiB a direction, {PIECE >> 20} MiB pieces, {STREAMS} streams")
    print(f"{'case':12} {'out_GB/s':>9} {'in_GB/s':>9} {'wall_s':>7}  note")
    for c in cases:
        if c == "alone":
            o, i, w = case_alone(n)
            print(f"{c:12} {o:9.1f} {i:9.1f} {w:7.3f}  one after the other")
        elif c == "one-process":
            o, i, w = case_one_process(n)
            print(f"{c:12} {o:9.1f} {i:9.1f} {w:7.3f}  in = both done")
        else:
            o, i, w, skew = case_two(n, c == "two-memfd")
            print(f"{c:12} {o:9.1f} {i:9.1f} {w:7.3f}  starts {skew * 1000:.1f} ms apart")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
