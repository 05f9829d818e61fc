"""trace_model: a PyTorch model server for the trace benchmark
(bench/gpu_trace.sh). A plain decoder of about --gib GiB in bf16 (no
framework beyond torch, so that it is deterministic), whose weights come
from a safetensors file (made on first use from a seed, then read from the
page cache at every start: what a server that is stopped and started again
pays), behind an OpenAI-style HTTP API on $PORT:
  GET  /health                200 once loaded
  POST /v1/chat/completions   streamed (SSE) or not: max_tokens greedy tokens
  GET  /checksum              a hash of every weight, read back from the GPU
Its log says the checksum of the weights as loaded, to compare at the end.
"""
import argparse, faulthandler, hashlib, json, os, signal, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file

faulthandler.register(signal.SIGUSR2)  # every thread's stack, for a stuck server
ap = argparse.ArgumentParser()
ap.add_argument("--gib", type=float, required=True)
ap.add_argument("--file", required=True)
ap.add_argument("--seed", type=int, default=1)
a = ap.parse_args()

HIDDEN, HEADS, INTER, VOCAB = 4096, 32, 11008, 32000
PER_LAYER = 4 * HIDDEN * HIDDEN + 3 * HIDDEN * INTER
LAYERS = max(1, round((a.gib * (1 << 30) / 2 - 2 * VOCAB * HIDDEN) / PER_LAYER))


def shapes():
    s = {"embed": (VOCAB, HIDDEN), "head": (VOCAB, HIDDEN)}
    for i in range(LAYERS):
        for n, shp in (("qkv", (3 * HIDDEN, HIDDEN)), ("o", (HIDDEN, HIDDEN)),
                       ("up", (2 * INTER, HIDDEN)), ("down", (HIDDEN, INTER))):
            s[f"l{i}.{n}"] = shp
    return s


def make_file():
    g = torch.Generator(device="cuda").manual_seed(a.seed)
    sd = {}
    for n, shp in shapes().items():
        t = torch.randn(shp, generator=g, device="cuda", dtype=torch.bfloat16)
        sd[n] = (t * (1.0 / shp[1] ** 0.5)).cpu()
    tmp = a.file + ".tmp"
    save_file(sd, tmp)
    os.rename(tmp, a.file)


t0 = time.time()
if not os.path.exists(a.file):
    make_file()
W = {k: v.to("cuda", non_blocking=True) for k, v in load_file(a.file).items()}
torch.cuda.synchronize()


def checksum():
    h = hashlib.sha256()
    with torch.no_grad():
        for k in sorted(W):
            v = W[k].view(torch.int16)
            h.update(v.sum(dtype=torch.int64).cpu().numpy().tobytes())
            h.update(v.flatten()[::4099].cpu().numpy().tobytes())
    return h.hexdigest()


def rms(x):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype)


def forward(ids, cache):
    """Logits of the last position; cache: per layer (k, v) so far."""
    x = W["embed"][ids]  # (T, H)
    T = x.shape[0]
    for i in range(LAYERS):
        q, k, v = (rms(x) @ W[f"l{i}.qkv"].T).split(HIDDEN, dim=-1)
        q, k, v = (t.view(T, HEADS, -1).transpose(0, 1) for t in (q, k, v))
        if cache[i] is not None:
            k = torch.cat([cache[i][0], k], dim=1)
            v = torch.cat([cache[i][1], v], dim=1)
        cache[i] = (k, v)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=cache[i][0].shape[1] == T)
        x = x + att.transpose(0, 1).reshape(T, HIDDEN) @ W[f"l{i}.o"].T
        gate, up = (rms(x) @ W[f"l{i}.up"].T).split(INTER, dim=-1)
        x = x + (F.silu(gate) * up) @ W[f"l{i}.down"].T
    return rms(x[-1]) @ W["head"].T


PROMPT = torch.arange(1, 129, device="cuda")


def tokens(n):
    with torch.no_grad():
        cache = [None] * LAYERS
        logits = forward(PROMPT, cache)
        for _ in range(n):
            t = int(torch.argmax(logits))
            yield t
            logits = forward(torch.tensor([t], device="cuda"), cache)


# a first generation compiles and caches kernels (0.4-0.8 s on the H200):
# done before the server says it is up, as real servers warm up
list(tokens(2))
torch.cuda.synchronize()
print(f"trace_model: {LAYERS} layers, {torch.cuda.memory_allocated() / 2**30:.2f} GiB, "
      f"loaded in {time.time() - t0:.2f} s, checksum {checksum()}", flush=True)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            self.reply(200, b"ok", "text/plain")
        elif self.path == "/checksum":
            self.reply(200, json.dumps({"sha256": checksum()}).encode())
        else:
            self.reply(404, b"{}")

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        req = json.loads(self.rfile.read(n) or b"{}")
        count = int(req.get("max_tokens", 16))
        if not req.get("stream"):
            out = list(tokens(count))
            self.reply(200, json.dumps({"choices": [{"message": {"content": str(out)}}]}).encode())
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def chunk(data):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        for t in tokens(count):
            chunk(b"data: " + json.dumps({"choices": [{"delta": {"content": f" {t}"}}]}).encode()
                  + b"\n\n")
        chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
