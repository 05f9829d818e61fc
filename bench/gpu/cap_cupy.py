"""Under `vram run --vram 4G`: what CuPy sees, and where it runs out."""
import json, sys
import cupy as cp

out = {"memGetInfo": cp.cuda.runtime.memGetInfo()}
for gib in [float(a) for a in sys.argv[1:]]:
    try:
        x = cp.empty(int(gib * (1 << 30)), dtype=cp.uint8)
        x.fill(3)
        cp.cuda.runtime.deviceSynchronize()
        out[str(gib)] = "ok"
        del x
        cp.get_default_memory_pool().free_all_blocks()
    except cp.cuda.memory.OutOfMemoryError:
        out[str(gib)] = "OutOfMemoryError"
print(json.dumps(out))
