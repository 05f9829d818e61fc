"""Under `vram run --vram 4G`: what PyTorch sees, and where it runs out.
usage: cap_torch.py SIZE... where SIZE is GiB, or "free" for all that
mem_get_info says is free less 32 MiB; prints one JSON line."""
import json, sys
import torch

out = {"mem_get_info": torch.cuda.mem_get_info()}


def nvml_total():
    """NVML asked from inside the process (ctypes resolves it with dlsym)."""
    import ctypes
    nv = ctypes.CDLL("libnvidia-ml.so.1")
    class Mem(ctypes.Structure):
        _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                    ("used", ctypes.c_ulonglong)]
    h, m = ctypes.c_void_p(), Mem()
    if nv.nvmlInit_v2() or nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)):
        return None
    nv.nvmlDeviceGetMemoryInfo(h, ctypes.byref(m))
    return [m.total, m.used, m.free]


out["nvml_v1"] = nvml_total()
for arg in sys.argv[1:]:
    gib = (out["mem_get_info"][0] - (32 << 20)) / (1 << 30) if arg == "free" else float(arg)
    try:
        x = torch.empty(int(gib * (1 << 30)), dtype=torch.uint8, device="cuda")
        x.fill_(7)
        torch.cuda.synchronize()
        out[arg] = "ok"
        del x
        torch.cuda.empty_cache()
    except torch.OutOfMemoryError as e:
        out[arg] = "OutOfMemoryError"
out["reserved_after"] = torch.cuda.memory_reserved()
print(json.dumps(out))
