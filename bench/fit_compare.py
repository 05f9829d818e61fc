#!/usr/bin/env python3
"""vram fit's estimates against VRAM measured on a real GPU.

Reads the measurements bench/gpu_fit_measure.sh took (JSON lines), asks
`vram fit --json` for the same config, precision, context and mode, and
prints a table with the error of vram fit and of a weights-only estimate
(what accelerate's estimate-memory reports: the weights for inference, 4x
them for training with Adam). Rows measured after torch.cuda.empty_cache()
(all but bench/gpu/fit_user.py's) are compared without the block vram fit
counts as kept from loading, which that call gives back.

usage: bench/fit_compare.py [MEASURED.jsonl] [VRAM_BINARY]"""
import json, subprocess, sys

meas = sys.argv[1] if len(sys.argv) > 1 else "bench/fit_measured_h200.jsonl"
vram = sys.argv[2] if len(sys.argv) > 2 else "build/vram"
G = 1 << 30
rows, worst = [], 0.0
print(f"{'config':15} {'dtype':5} {'mode':6} {'ctx':>5} {'measured':>9} {'vram fit':>9} {'err':>7}"
      f" {'weights-only':>12} {'err':>7}")
for line in open(meas):
    d = json.loads(line)
    cfg = f"tests/fixtures/configs/{d['config']}.json"
    args = [vram, "fit", "--json", "--vram", "1000G", "--dtype", d["dtype"]]
    args += ["--train", "--seq", str(d["ctx"])] if d["mode"] == "train" else ["--ctx", str(d["ctx"])]
    est = json.loads(subprocess.run(args + [cfg], capture_output=True, text=True, check=True).stdout)
    e = est["models"][0]["estimates"][0]
    # bench/gpu/fit_measure.py and fit_generate.py empty the caching
    # allocator before they measure (torch.cuda.empty_cache()), which a
    # user's process does not: compared like with like, without the block
    # vram fit counts as kept from loading. fit_user.py's rows ("emptied":
    # false) measure a process as a user runs it, against the whole figure.
    if d.get("emptied", True):
        e = dict(e, total=e["total"] - e.get("kept_from_load", 0))
    weights_only = d["params"] * (2 if d["dtype"] == "bf16" else 4) * (4 if d["mode"] == "train" else 1)
    m = d.get("measured")
    if not m:  # out of memory on the 141 GiB card
        verdict = "predicted not to fit" if e["total"] > 139.8 * G else "PREDICTED TO FIT"
        print(f"{d['config']:15} {d['dtype']:5} {d['mode']:6} {d['ctx']:5} {'OOM':>9} "
              f"{e['total'] / G:9.2f} {verdict}")
        continue
    err = (e["total"] - m) / m * 100
    werr = (weights_only - m) / m * 100
    worst = max(worst, abs(err))
    print(f"{d['config']:15} {d['dtype']:5} {d['mode']:6} {d['ctx']:5} {m / G:9.2f} "
          f"{e['total'] / G:9.2f} {err:+6.1f}% {weights_only / G:12.2f} {werr:+6.1f}%")
print(f"\nworst error of vram fit: {worst:.1f}%  (sizes in GiB)")
