"""Under `vram run --vram 4G`: what PyTorch sees, and where it runs out.
usage: cap_torch.py SIZE... where SIZE is GiB, or "free" for all that
mem_get_info says is free less 32 MiB; prints one JSON line."""
import json, sys
import torch

out = {"mem_get_info": torch.cuda.mem_get_info()}
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
