"""Under `vram run --vram 4G`: what CuPy sees, and where it runs out."""
import json, sys
import cupy as cp

out = {"memGetInfo": cp.cuda.runtime.memGetInfo()}
for arg in sys.argv[1:]:
    gib = (out["memGetInfo"][0] - (32 << 20)) / (1 << 30) if arg == "free" else float(arg)
    try:
        x = cp.empty(int(gib * (1 << 30)), dtype=cp.uint8)
        x.fill(3)
        cp.cuda.runtime.deviceSynchronize()
        out[arg] = "ok"
        del x
        cp.get_default_memory_pool().free_all_blocks()
    except cp.cuda.memory.OutOfMemoryError:
        out[arg] = "OutOfMemoryError"
print(json.dumps(out))
