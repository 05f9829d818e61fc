"""Under `vram run --vram 4G`: what JAX sees, and where it runs out.
usage: cap_jax.py GIB... (set XLA_PYTHON_CLIENT_PREALLOCATE=false to allocate on demand)"""
import json, sys
import jax, jax.numpy as jnp

d = jax.devices()[0]
out = {"bytes_limit": (d.memory_stats() or {}).get("bytes_limit")}
for gib in [float(a) for a in sys.argv[1:]]:
    try:
        x = jnp.ones((int(gib * (1 << 30)),), dtype=jnp.uint8)
        x.block_until_ready()
        out[str(gib)] = "ok"
        del x
    except Exception as e:  # XlaRuntimeError: RESOURCE_EXHAUSTED
        out[str(gib)] = type(e).__name__ + (": RESOURCE_EXHAUSTED" if "RESOURCE_EXHAUSTED" in str(e) else "")
print(json.dumps(out))
