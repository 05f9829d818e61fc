"""A small transformer's training or inference loop, timed: the overhead
benchmark runs it bare and under `vram run`, alternating.
usage: torch_loop.py train|infer STEPS; prints steps per second."""
import sys, time
import torch, torch.nn as nn

mode, steps = sys.argv[1], int(sys.argv[2])
torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=1024, nhead=16, dim_feedforward=4096,
                                   batch_first=True, dtype=torch.bfloat16, device="cuda")
model = nn.TransformerEncoder(layer, num_layers=8)
x = torch.randn(16, 512, 1024, dtype=torch.bfloat16, device="cuda")
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)


def step():
    if mode == "train":
        opt.zero_grad(set_to_none=True)
        model(x).float().pow(2).mean().backward()
        opt.step()
    else:
        with torch.no_grad():
            model(x)


for _ in range(20):
    step()
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(steps):
    step()
torch.cuda.synchronize()
print(f"{steps / (time.perf_counter() - t0):.3f}")
