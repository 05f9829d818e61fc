"""Under `vram run --gpus ...` (or VRAM_CAP): what PyTorch sees on each of
its devices, and where each runs out. Each device on its own: mem_get_info,
the device's total (cuDeviceTotalMem through get_device_properties), NVML
by the device's UUID, then SIZE GiB, then MORE GiB on top, on every device.
usage: caps_multi_torch.py SIZE MORE; prints one JSON line."""
import ctypes, json, sys
import torch

size, more = float(sys.argv[1]), float(sys.argv[2])
GiB = 1 << 30


def nvml_total(uuid):
    nv = ctypes.CDLL("libnvidia-ml.so.1")
    class Mem(ctypes.Structure):
        _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                    ("used", ctypes.c_ulonglong)]
    h, m = ctypes.c_void_p(), Mem()
    if nv.nvmlInit_v2() or nv.nvmlDeviceGetHandleByUUID(uuid.encode(), ctypes.byref(h)):
        return None
    nv.nvmlDeviceGetMemoryInfo(h, ctypes.byref(m))
    return m.total


def grab(dev, gib):
    try:
        x = torch.empty(int(gib * GiB), dtype=torch.uint8, device=f"cuda:{dev}")
        x.fill_(7)
        torch.cuda.synchronize(dev)
        return "ok", x
    except torch.OutOfMemoryError:
        return "OutOfMemoryError", None


out, held = {"devices": []}, []
for d in range(torch.cuda.device_count()):
    p = torch.cuda.get_device_properties(d)
    r = {"dev": d, "props_total": p.total_memory, "nvml_total": nvml_total("GPU-" + str(p.uuid))}
    out["devices"].append(r)
    try:  # a device with no slice refuses even its context
        r["free"], r["total"] = torch.cuda.mem_get_info(d)
        r["size"], x = grab(d, size)
        held.append(x)
    except RuntimeError as e:
        r["size"] = "error: " + str(e).splitlines()[0]
for r in out["devices"]:
    if r["size"] == "ok":
        r["more"], x = grab(r["dev"], more)
        held.append(x)
print(json.dumps(out))
