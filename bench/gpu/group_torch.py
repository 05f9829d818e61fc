"""Two processes of one `vram run` group, each taking 256 MiB blocks until
it runs out: together they must never pass the group's slice. The parent
waits for both to stop, then reads what they hold from nvidia-smi."""
import json, multiprocessing as mp, os, subprocess, sys, time


def child(q, go):
    import torch
    torch.cuda.init()
    torch.empty(1, device="cuda")
    q.put(("ctx", os.getpid()))
    go.wait()
    held = []
    while True:
        try:
            held.append(torch.empty(256 << 20, dtype=torch.uint8, device="cuda"))
        except torch.OutOfMemoryError:
            break
    torch.cuda.synchronize()
    q.put(("done", os.getpid(), len(held) * 256))
    time.sleep(600)


if __name__ == "__main__":
    cap_gib = float(sys.argv[1])
    ctx = mp.get_context("spawn")
    q, go = ctx.Queue(), ctx.Event()
    kids = [ctx.Process(target=child, args=(q, go)) for _ in range(2)]
    for k in kids:
        k.start()
    for _ in kids:
        q.get(timeout=120)
    go.set()  # both start taking memory at the same instant
    done = [q.get(timeout=120) for _ in kids]
    smi = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                          "--format=csv,noheader,nounits"], capture_output=True, text=True).stdout
    used = {int(l.split(",")[0]): int(l.split(",")[1]) for l in smi.splitlines() if l.strip()}
    total = sum(used.get(k.pid, 0) for k in kids)
    print(json.dumps({"children_mib": [d[2] for d in done], "nvml_mib": [used.get(k.pid) for k in kids],
                      "total_mib": total, "cap_mib": cap_gib * 1024,
                      "within": total <= cap_gib * 1024}))
    for k in kids:
        k.kill()
