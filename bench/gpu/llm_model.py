"""llm_model: a real transformers LLM server for the tail benchmark
(bench/gpu_trace.sh with MODEL_CMD, issue 27): LlamaForCausalLM with
Llama-3.2-3B's shape (28 layers, hidden 3072, 24 heads of which 8 for keys
and values, vocabulary 128256, tied embeddings; about 6.4 GB in bf16) and
seeded random weights, greedy decoding with the KV cache, behind an
OpenAI-style HTTP API on $PORT:
  GET  /health                200 once loaded
  POST /v1/chat/completions   streamed (SSE) or not: max_tokens greedy tokens
  GET  /checksum              a hash of the answer to a fixed prompt (32
                              greedy tokens) and of every weight: the same
                              before and after every swap, or the model is
                              not what it was
Its log says that checksum as loaded, to compare at the end.
"""
import argparse, hashlib, json, os, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.cache_utils import DynamicCache

ap = argparse.ArgumentParser()
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--layers", type=int, default=28)
# --trim: the allocator's cache given back once loaded (torch.cuda.empty_cache):
# random weights made on the GPU leave ~4 GiB of it (10.4 GiB in all), which
# a server loading real weights from a file does not hold (~7 GiB)
ap.add_argument("--trim", action="store_true")
a = ap.parse_args()

t0 = time.time()
torch.manual_seed(a.seed)
cfg = LlamaConfig(hidden_size=3072, intermediate_size=8192, num_hidden_layers=a.layers,
                  num_attention_heads=24, num_key_value_heads=8, vocab_size=128256,
                  max_position_embeddings=131072, rope_theta=500000.0, tie_word_embeddings=True,
                  rms_norm_eps=1e-5)
with torch.device("cuda"):
    model = LlamaForCausalLM._from_config(cfg, torch_dtype=torch.bfloat16)
model.eval()
lock = threading.Lock()  # one generation at a time, as a plain server does
PROMPT = torch.arange(100, 164, device="cuda").unsqueeze(0)


def tokens(n):
    """n greedy tokens after the fixed prompt, with the KV cache."""
    with torch.no_grad():
        cache = DynamicCache()
        out = model(input_ids=PROMPT, past_key_values=cache, use_cache=True)
        for _ in range(n):
            t = out.logits[0, -1].argmax()
            yield int(t)
            out = model(input_ids=t.view(1, 1), past_key_values=out.past_key_values,
                        use_cache=True)


def checksum():
    with lock:
        h = hashlib.sha256(json.dumps(list(tokens(32))).encode())
        with torch.no_grad():
            for p in model.parameters():
                v = p.detach().view(torch.int16)
                h.update(v.sum(dtype=torch.int64).cpu().numpy().tobytes())
        return h.hexdigest()


with lock:
    list(tokens(2))  # kernels compiled and cached before the server is up
torch.cuda.synchronize()
SUM = checksum()
if a.trim:  # after the checksum too: its sums leave blocks in the cache
    torch.cuda.empty_cache()
print(f"llm_model: {a.layers} layers, {torch.cuda.memory_allocated() / 2**30:.2f} GiB, "
      f"{torch.cuda.memory_reserved() / 2**30:.2f} GiB reserved, "
      f"loaded in {time.time() - t0:.2f} s, checksum {SUM}", flush=True)


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
        with lock:
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
