"""serve_table: the summary table of bench/gpu_serve.sh, from its ROW lines
(stdin): per model, cold start, suspend and resume times, the rates they
imply, and whether generation and weights came back the same."""
import sys

print(f"{'model':6} {'size':6} {'start_s':>8} {'suspend_s':>9} {'resume_s':>8} "
      f"{'moved_GB':>8} {'out_GB/s':>8} {'in_GB/s':>7}  generate  weights")
for line in sys.stdin:
    if not line.startswith("ROW"):
        continue
    parts = line.split()
    name, size = parts[1], parts[2]
    f = dict(kv.split("=", 1) for kv in parts[3:])
    gb = int(f["host_bytes"]) / 1e9
    s, r = float(f["suspend"]), float(f["resume"])
    print(f"{name:6} {size:6} {float(f['start']):8.2f} {s:9.2f} {r:8.2f} {gb:8.2f} "
          f"{gb / s:8.2f} {gb / r:7.2f}  {f['generate']:8}  {f['checksum']}")
