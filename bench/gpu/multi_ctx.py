"""multi_ctx: one process with two CUDA contexts of its own on one GPU
(cuCtxCreate twice, through the driver API by ctypes, as a runtime that
makes its own contexts does), --gib GiB of cuMemAlloc memory in each, in
256 MiB allocations filled with a pattern of their own. For
bench/gpu_multi.sh, under `vram run --swap` (bench/gpu/multi_bench.py
drives it over stdin).

Commands, one per line; each answer is one line on stdout:
  check  -> "ok BYTES" when every byte of both contexts' memory is still
            its pattern, "BAD CONTEXT CHUNK" at the first that is not
  quit
Prints "ready PID BYTES" once filled. Needs numpy."""
import argparse, ctypes, os, sys

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--gib", type=float, default=4)
ap.add_argument("--contexts", type=int, default=2)
a = ap.parse_args()

CH = 256 << 20
u64, vp, sz = ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t
cu = ctypes.CDLL("libcuda.so.1")  # its entry points come through libvramcap's dlsym
cu.cuInit.argtypes = [ctypes.c_uint]
cu.cuDeviceGet.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int]
cu.cuCtxSetCurrent.argtypes = [vp]
cu.cuMemAlloc_v2.argtypes = [ctypes.POINTER(u64), sz]
cu.cuMemcpyHtoD_v2.argtypes = [u64, vp, sz]
cu.cuMemcpyDtoH_v2.argtypes = [vp, u64, sz]


def ck(rc, what):
    if rc:
        print("BAD %s: CUDA error %d" % (what, rc), flush=True)
        sys.exit(1)


def create_context(dev):
    ctx = vp()
    if hasattr(cu, "cuCtxCreate_v2"):
        cu.cuCtxCreate_v2.argtypes = [ctypes.POINTER(vp), ctypes.c_uint, ctypes.c_int]
        ck(cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev), "cuCtxCreate_v2")
    else:  # CUDA 13's only form: a params struct, NULL for none
        cu.cuCtxCreate_v4.argtypes = [ctypes.POINTER(vp), vp, ctypes.c_uint, ctypes.c_int]
        ck(cu.cuCtxCreate_v4(ctypes.byref(ctx), None, 0, dev), "cuCtxCreate_v4")
    return ctx


ck(cu.cuInit(0), "cuInit")
dev = ctypes.c_int()
ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
mul = np.arange(CH // 8, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)  # wraps, as wanted


def pattern(c, i):
    return mul ^ np.uint64((c << 40) | (i + 1))


ctxs, chunks = [], []
n = max(1, int(a.gib * (1 << 30)) // CH)
for c in range(a.contexts):
    ctxs.append(create_context(dev))
    ck(cu.cuCtxSetCurrent(ctxs[c]), "cuCtxSetCurrent")
    mine = []
    for i in range(n):
        p = u64()
        ck(cu.cuMemAlloc_v2(ctypes.byref(p), CH), "cuMemAlloc")
        buf = pattern(c, i)
        ck(cu.cuMemcpyHtoD_v2(p.value, buf.ctypes.data, CH), "cuMemcpyHtoD")
        mine.append(p.value)
    chunks.append(mine)
host = np.empty(CH // 8, dtype=np.uint64)


def check():
    for c, ctx in enumerate(ctxs):
        ck(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        for i, p in enumerate(chunks[c]):
            ck(cu.cuMemcpyDtoH_v2(host.ctypes.data, p, CH), "cuMemcpyDtoH")
            if not np.array_equal(host, pattern(c, i)):
                return "BAD %d %d" % (c, i)
    return "ok %d" % (len(ctxs) * n * CH)


print("ready %d %d" % (os.getpid(), len(ctxs) * n * CH), flush=True)
for line in sys.stdin:
    cmd = line.split()
    if cmd and cmd[0] == "check":
        print(check(), flush=True)
    elif cmd and cmd[0] == "quit":
        break
