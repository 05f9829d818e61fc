"""capture_probe: does PyTorch capture a CUDA graph under libvramcap, in each
capture mode, with each allocator backend? One process per variant, all at
once (they are small), each with the driver's error log (CUDA_LOG_FILE,
driver 575+) so that a capture libvramcap breaks names the call that broke
it. Prints one line per variant: ok, or the error and the log's last lines.
usage: capture_probe.py VRAM OUTDIR
(run as a child: capture_probe.py --child MODE BACKEND)
"""
import os, subprocess, sys


def child(mode, backend):
    import torch
    dev = torch.device("cuda:0")
    layers = []
    for _ in range(8):
        layers += [torch.nn.Linear(4096, 4096, dtype=torch.float16), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers).to(dev)
    x = torch.randn(64, 4096, dtype=torch.float16, device=dev)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(3):
            model(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(g, capture_error_mode=mode):
        y = model(x)
    g.replay()
    torch.cuda.synchronize()
    ref = y.clone()
    g.replay()
    torch.cuda.synchronize()
    print("ok" if torch.equal(y, ref) else "replay differs", flush=True)


def main():
    vram, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    variants = []
    for backend in ("cudaMallocAsync", "native"):
        variants.append(("plain", "global", backend, []))
        for mode in ("global", "thread_local", "relaxed"):
            variants.append(("swap", mode, backend, [vram, "run", "--swap", "--quiet", "--"]))
        variants.append(("cap", "global", backend, [vram, "run", "--vram", "16G", "--quiet", "--"]))
    procs = []
    for how, mode, backend, pre in variants:
        name = "%s-%s-%s" % (how, mode, backend)
        env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF="backend:" + backend,
                   CUDA_LOG_FILE=os.path.join(out, name + ".cudalog"))
        cmd = pre + [sys.executable, os.path.abspath(__file__), "--child", mode, backend]
        procs.append((name, subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                             stderr=subprocess.STDOUT, text=True)))
    bad = 0
    for name, p in procs:
        try:
            text = p.communicate(timeout=240)[0]
        except subprocess.TimeoutExpired:
            p.kill()
            text = p.communicate()[0] + "\n(no answer in 240 s)"
        with open(os.path.join(out, name + ".txt"), "w") as f:
            f.write(text)
        lines = text.strip().splitlines()
        last = lines[-1] if lines else "(nothing)"
        # PyTorch may warn after the answer (graph memory freed at exit)
        ok = p.returncode == 0 and "ok" in lines
        bad += not ok
        print("%-36s %s" % (name, "ok" if ok else "FAILED: " + last[:150]))
        if not ok:
            try:
                log = open(os.path.join(out, name + ".cudalog")).read().strip().splitlines()
                for line in log[-4:]:
                    print("    driver log: " + line[:200])
            except OSError:
                pass
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())
