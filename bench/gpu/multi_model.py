"""multi_model: a PyTorch model over several GPUs, for bench/gpu_multi.sh
(vram serve starts it with gpus = 2, so CUDA_VISIBLE_DEVICES names both).
  peer     one process, --gib GiB of seeded random fp16 weights on each
           visible GPU, peer access enabled between every two
           (torch.cuda.can_device_access_peer; PyTorch enables it at the
           first copy between them, done before it says it is healthy)
  workers  one worker process per GPU (as vLLM and SGLang start theirs),
           --gib GiB each on its own GPU (--workers N, GPU i % count: two
           on one GPU where there is one); this process holds no GPU memory
HTTP on $PORT:
  /health    200 once every GPU holds its weights
  /checksum  {"sums": [[S1, S2], ...]}: two integer checksums over every
             weight byte, per GPU (peer) or per worker (workers)
  /peer      (peer) every GPU's first weights copied to every other GPU,
             whole (cudaMemcpy between devices) and transposed (a copy
             kernel that reads the peer's memory), then back, and compared:
             {"peer": true, "copies": N} or {"peer": false, "error": ...}
"""
import argparse, json, multiprocessing as mp, os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

CH = 256 << 20  # bytes per weight tensor


def make_weights(torch, dev, gib):
    g = torch.Generator(device=dev).manual_seed(1234 + dev.index)
    n = max(1, int(gib * (1 << 30)) // CH)
    return [torch.randn(CH // 2, dtype=torch.float16, device=dev, generator=g) for _ in range(n)]


def sums(torch, weights):
    s1 = s2 = 0
    for w in weights:
        v = w.view(torch.int32).to(torch.int64)
        s1 += int(v.sum())
        s2 += int((v * v).sum())  # wraps mod 2^64 the same way each time
    del v
    # the temporaries go back to the driver: what a swap moves is the weights
    torch.cuda.empty_cache()
    return [s1, s2]


def worker(i, gib, conn):
    import torch
    ngpu = torch.cuda.device_count()
    dev = torch.device("cuda", i % ngpu)
    torch.cuda.set_device(dev)
    weights = make_weights(torch, dev, gib)
    torch.cuda.synchronize()
    conn.send(("ready", os.getpid()))
    while True:
        cmd = conn.recv()
        if cmd == "checksum":
            conn.send(sums(torch, weights))
        elif cmd == "quit":
            return


def peer_copies(torch, weights):
    n = 0
    ndev = len(weights)
    for a in range(ndev):
        src = weights[a][0][: 4096 * 4096]
        m = src.view(4096, 4096)
        for b in range(ndev):
            if a == b:
                continue
            d = src.to(f"cuda:{b}")
            t = m.t().to(f"cuda:{b}")  # non-contiguous: a kernel reads the peer
            torch.cuda.synchronize(a)
            torch.cuda.synchronize(b)
            if not torch.equal(d.to(f"cuda:{a}"), src):
                return {"peer": False, "error": f"GPU {a} to {b}: the copy differs"}
            if not torch.equal(t.to(f"cuda:{a}"), m.t()):
                return {"peer": False, "error": f"GPU {a} to {b}: the transposed copy differs"}
            n += 4
            del d, t
    torch.cuda.empty_cache()
    return {"peer": True, "copies": n}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["peer", "workers"])
    ap.add_argument("--gib", type=float, default=8)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    state = {}
    if a.mode == "peer":
        import torch
        ndev = torch.cuda.device_count()
        if ndev < 2:
            sys.exit("multi_model peer: needs 2 GPUs, sees %d" % ndev)
        can = [[i == j or torch.cuda.can_device_access_peer(i, j) for j in range(ndev)]
               for i in range(ndev)]
        weights = [make_weights(torch, torch.device("cuda", d), a.gib) for d in range(ndev)]
        first = peer_copies(torch, weights)  # enables peer access, before any suspend
        print("multi_model peer: %d GPUs, %.1f GiB each, can access peer %s, first copies %s"
              % (ndev, len(weights[0]) * CH / 2**30, can, first), flush=True)

        def checksum():
            return [sums(torch, w) for w in weights]

        def peer():
            return dict(peer_copies(torch, weights), can_access_peer=can)
    else:
        ctx = mp.get_context("spawn")
        conns = []
        for i in range(a.workers):
            mine, theirs = ctx.Pipe()
            ctx.Process(target=worker, args=(i, a.gib, theirs), daemon=True).start()
            conns.append(mine)
        pids = [c.recv()[1] for c in conns]
        print("multi_model workers: pids %s, %.1f GiB each" % (pids, a.gib), flush=True)

        def checksum():
            for c in conns:
                c.send("checksum")
            return [c.recv() for c in conns]

        def peer():
            return {"peer": None}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            if self.path == "/health":
                body = {"ok": True}
            elif self.path == "/checksum":
                body = {"sums": checksum()}
            elif self.path == "/peer":
                body = peer()
            else:
                self.send_error(404)
                return
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    # one request at a time: the workers' pipes are not shared
    HTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()


if __name__ == "__main__":
    main()
