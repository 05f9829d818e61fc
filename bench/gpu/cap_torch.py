"""Under `vram run --vram 4G`: what PyTorch sees, and where it runs out.
usage: cap_torch.py GIB... ; prints one JSON line."""
import json, sys
import torch

out = {"mem_get_info": torch.cuda.mem_get_info()}
for gib in [float(a) for a in sys.argv[1:]]:
    try:
        x = torch.empty(int(gib * (1 << 30)), dtype=torch.uint8, device="cuda")
        x.fill_(7)
        torch.cuda.synchronize()
        out[str(gib)] = "ok"
        del x
        torch.cuda.empty_cache()
    except torch.OutOfMemoryError as e:
        out[str(gib)] = "OutOfMemoryError"
out["reserved_after"] = torch.cuda.memory_reserved()
print(json.dumps(out))
