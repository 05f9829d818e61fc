"""serve_model: a PyTorch "model server" for vram serve's GPU checks: a
random-weight Llama-shaped transformer of about --gib GiB in bf16 on the
GPU (seeded, so the weights are the same every run), behind HTTP on $PORT:
  /health     200 once loaded
  /generate   16 greedy tokens from a fixed prompt, as JSON
  /checksum   a hash of every weight, read back from the GPU
"""
import argparse, hashlib, json, os, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import torch
from transformers import LlamaConfig, LlamaForCausalLM

ap = argparse.ArgumentParser()
ap.add_argument("--gib", type=float, required=True)
a = ap.parse_args()

t0 = time.time()
torch.manual_seed(1234)
hidden, inter, vocab = 4096, 11008, 32000
per_layer = 4 * hidden * hidden + 3 * hidden * inter
layers = max(1, round((a.gib * (1 << 30) / 2 - 2 * vocab * hidden) / per_layer))
cfg = LlamaConfig(hidden_size=hidden, intermediate_size=inter, num_hidden_layers=layers,
                  num_attention_heads=32, num_key_value_heads=32, vocab_size=vocab)
with torch.device("cuda"):
    model = LlamaForCausalLM._from_config(cfg, torch_dtype=torch.bfloat16)
model.eval()
torch.cuda.synchronize()
params = sum(p.numel() for p in model.parameters())
print(f"serve_model: {layers} layers, {params / 1e9:.2f} B parameters, "
      f"{torch.cuda.memory_allocated() / 2**30:.2f} GiB, loaded in {time.time() - t0:.1f} s",
      flush=True)
prompt = torch.tensor([[1, 450, 4996, 17354, 1701, 432, 17204, 975, 278, 17366, 11203]],
                      device="cuda")


def generate():
    with torch.no_grad():
        out = model.generate(prompt, max_new_tokens=16, do_sample=False,
                             pad_token_id=0)
    return out[0].tolist()


def checksum():
    h = hashlib.sha256()
    with torch.no_grad():
        for p in model.parameters():
            h.update(p.detach().view(torch.int16).sum(dtype=torch.int64).cpu().numpy().tobytes())
            h.update(p.detach().view(torch.int16)[::4099].cpu().numpy().tobytes())
    return h.hexdigest()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/health":
            body = b"ok"
        elif self.path == "/generate":
            body = json.dumps({"tokens": generate()}).encode()
        elif self.path == "/checksum":
            body = json.dumps({"sha256": checksum()}).encode()
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
