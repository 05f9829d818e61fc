"""alloc_model: a GPU process holding GIB GiB through one of the allocators
fast swap must move (bench/gpu/alloc_bench.py drives it over stdin, under
`vram run --swap`):
  torch_async        PyTorch, PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
                     (the driver's default pool: cudaMallocAsync)
  cupy_async         CuPy, cupy.cuda.MemoryAsyncPool (the device's pool)
  cupy_pool          CuPy's MemoryAsyncPool on a pool the process made itself
                     (cuMemPoolCreate through ctypes, release threshold max)
  torch_graph        PyTorch (its caching allocator), a model captured in a
                     CUDA graph (torch.cuda.graphs), replayed by every check
  torch_graph_async  the same under backend:cudaMallocAsync (the graph's
                     outputs are graph memory: expected to go to the driver)
Commands, one per line, one answer line each:
  check   -> "ok S1 S2 G": checksums over every weight byte (and, for the
             graphs, G = 1 when a replay gives the first replay's output bit
             for bit); "BAD ..." otherwise
  churn   -> "ok N": allocates, fills, checks and frees N tensors on two
             streams (the pools' reuse, after a resume)
  quit
Prints "ready PID BYTES" once its weights are on the GPU."""
import argparse
import ctypes
import os
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--mode", required=True)
ap.add_argument("--gib", type=float, required=True)
a = ap.parse_args()
CH = 256 << 20  # bytes per weight tensor
n = max(1, int(a.gib * (1 << 30)) // CH)


def user_pool():
    """A pool of the program's own (cuMemPoolCreate), keeping what is freed."""

    class Props(ctypes.Structure):
        _fields_ = [("allocType", ctypes.c_int), ("handleTypes", ctypes.c_int),
                    ("locType", ctypes.c_int), ("locId", ctypes.c_int),
                    ("win32", ctypes.c_void_p), ("maxSize", ctypes.c_size_t),
                    ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 54)]

    cuda = ctypes.CDLL("libcuda.so.1")
    props = Props(allocType=1, handleTypes=0, locType=1, locId=0)
    pool = ctypes.c_void_p()
    rc = cuda.cuMemPoolCreate(ctypes.byref(pool), ctypes.byref(props))
    if rc:
        sys.exit("cuMemPoolCreate: %d" % rc)
    keep = ctypes.c_uint64((1 << 64) - 1)
    cuda.cuMemPoolSetAttribute(pool, 4, ctypes.byref(keep))  # release threshold
    return pool.value


if a.mode.startswith("cupy"):
    import cupy as cp

    cp.cuda.Device(0).use()
    cp.zeros(1)  # the context
    handle = user_pool() if a.mode == "cupy_pool" else "current"
    cp.cuda.set_allocator(cp.cuda.MemoryAsyncPool(pool_handles=handle).malloc)
    rs = cp.random.RandomState(1234)
    weights = [rs.standard_normal(CH // 4, dtype=cp.float32) for _ in range(n)]
    cp.cuda.Device(0).synchronize()

    def sums():
        s1 = s2 = 0
        for w in weights:
            v = w.view(cp.int32).astype(cp.int64)
            s1 += int(v.sum())
            s2 += int((v * v).sum())
        return s1, s2, 1

    def churn(k):
        streams = [cp.cuda.Stream(non_blocking=True) for _ in range(2)]
        for i in range(k):
            with streams[i % 2]:
                t = cp.full((4 << 20,), i % 251, dtype=cp.uint8)
                if int(t[12345]) != i % 251 or int(t[-1]) != i % 251:
                    return False
                del t
        cp.cuda.Device(0).synchronize()
        return True
else:
    import torch

    dev = torch.device("cuda:0")
    g = torch.Generator(device=dev).manual_seed(1234)
    weights = [torch.randn(CH // 2, dtype=torch.float16, device=dev, generator=g)
               for _ in range(n)]
    graph = None
    if a.mode.startswith("torch_graph"):
        layers = []
        for _ in range(8):
            layers += [torch.nn.Linear(4096, 4096, dtype=torch.float16), torch.nn.GELU()]
        model = torch.nn.Sequential(*layers).to(dev)
        static_in = torch.randn(64, 4096, dtype=torch.float16, device=dev, generator=g)
        fixed_in = static_in.clone()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s), torch.no_grad():
            for _ in range(3):
                model(static_in)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.no_grad(), torch.cuda.graph(graph):
            static_out = model(static_in)
        graph.replay()
        torch.cuda.synchronize()
        ref_out = static_out.clone()
        out_ptr = static_out.data_ptr()
    torch.cuda.synchronize()

    def sums():
        s1 = s2 = 0
        for w in weights:
            v = w.view(torch.int32).to(torch.int64)
            s1 += int(v.sum())
            s2 += int((v * v).sum())  # wraps mod 2^64 identically each time
        same = 1
        if graph is not None:
            static_in.copy_(fixed_in)
            static_out.zero_()
            graph.replay()
            torch.cuda.synchronize()
            same = int(torch.equal(static_out, ref_out) and static_out.data_ptr() == out_ptr)
        return s1, s2, same

    def churn(k):
        streams = [torch.cuda.Stream() for _ in range(2)]
        for i in range(k):
            with torch.cuda.stream(streams[i % 2]):
                t = torch.full((4 << 20,), i % 251, dtype=torch.uint8, device=dev)
                if int(t[12345]) != i % 251 or int(t[-1]) != i % 251:
                    return False
                del t
        torch.cuda.synchronize()
        return True

ref = sums()
print("ready %d %d" % (os.getpid(), n * CH), flush=True)
for line in sys.stdin:
    cmd = line.split()
    if not cmd:
        continue
    if cmd[0] == "check":
        s = sums()
        print(("ok %d %d %d" if s == ref else "BAD %d %d %d") % s, flush=True)
    elif cmd[0] == "churn":
        k = int(cmd[1]) if len(cmd) > 1 else 64
        print(("ok %d" if churn(k) else "BAD churn %d") % k, flush=True)
    elif cmd[0] == "quit":
        break
