#!/usr/bin/env python3
"""mkgguf: GGUF files that llama.cpp loads, with the shapes of real models and
zeros for weights (the data section is a hole: the files cost no disk).

Zeros keep every activation finite (norms of zero vectors are zero, softmax of
zeros is uniform), so llama-server runs prompts and samples tokens through the
same kernels and buffers as with trained weights. The tokenizer is a
SentencePiece-style vocabulary of the model's size (special tokens, the 256
byte tokens, then fillers), enough for llama.cpp to load and to decode.

Quantizations follow llama-quantize's choices where they change the bytes:
Q4_K_M keeps the output (or a tied embedding) and some attn_v and ffn_down
layers in Q6_K; K-quant rows that are not whole 256-blocks fall back to
Q5_0/Q8_0 as llama-quantize does.

With --random SEED the weights are written, random (f16 only): a model
that says something, for a real llama.cpp behind the proxy in the tests
(tests/cli/clients.sh makes tiny-f16, 0.5 MiB).

usage: mkgguf.py [--random SEED] DIR [NAME...]   NAME is MODEL-QUANT, e.g. llama8b-q4_k_m;
       mkgguf.py --list                          the models and quantizations known
Stdlib only (runs on the GPU machine's python3 with nothing installed)."""
import os
import struct
import sys

# shapes of released models (their config.json), arch as llama.cpp names it
MODELS = {
    "tiny": dict(arch="llama", layers=2, hidden=64, heads=4, kv=2, ff=128, vocab=512,
                 tied=True, ctx=2048, eps=1e-5, rope=1e4),
    "qwen05b": dict(arch="qwen2", layers=24, hidden=896, heads=14, kv=2, ff=4864, vocab=151936,
                    tied=True, bias=True, ctx=32768, eps=1e-6, rope=1e6),
    "llama1b": dict(arch="llama", layers=16, hidden=2048, heads=32, kv=8, ff=8192, vocab=128256,
                    tied=True, ctx=131072, eps=1e-5, rope=5e5),
    "gemma2b": dict(arch="gemma2", layers=26, hidden=2304, heads=8, kv=4, head_dim=256, ff=9216,
                    vocab=256000, tied=True, ctx=8192, eps=1e-6, rope=1e4, swa=4096),
    "qwen7b": dict(arch="qwen2", layers=28, hidden=3584, heads=28, kv=4, ff=18944, vocab=152064,
                   tied=False, bias=True, ctx=32768, eps=1e-6, rope=1e6),
    "llama8b": dict(arch="llama", layers=32, hidden=4096, heads=32, kv=8, ff=14336, vocab=128256,
                    tied=False, ctx=131072, eps=1e-5, rope=5e5),
}
QUANTS = ("f16", "q8_0", "q4_k_m")

# ggml types: (id, elements per block, bytes per block)
F32, F16, Q5_0, Q8_0, Q4_K, Q6_K = (0, 1, 4), (1, 1, 2), (6, 32, 22), (8, 32, 34), (12, 256, 144), (14, 256, 210)
FILE_TYPE = {"f16": 1, "q8_0": 7, "q4_k_m": 15}


def more_bits(i, n):  # llama-quantize's use_more_bits
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def pick(quant, name, ne0, layer, n_layer, tied):
    if quant == "f16":
        return F16
    if quant == "q8_0":
        t = Q8_0
    elif name == "output.weight" or (tied and name == "token_embd.weight"):
        t = Q6_K
    elif name.endswith(("attn_v.weight", "ffn_down.weight")) and more_bits(layer, n_layer):
        t = Q6_K
    else:
        t = Q4_K
    if ne0 % t[1]:
        t = {Q4_K: Q5_0, Q6_K: Q8_0}.get(t, t)
    return t if ne0 % t[1] == 0 else F16


def tensors(m, quant):
    """(name, [ne0, ne1...], type) as llama.cpp's loader expects them."""
    h, hd = m["hidden"], m.get("head_dim", m["hidden"] // m["heads"])
    q, kv, n = m["heads"] * hd, m["kv"] * hd, m["layers"]
    out = [("token_embd.weight", [h, m["vocab"]]), ("output_norm.weight", [h])]
    if not m["tied"]:
        out.append(("output.weight", [h, m["vocab"]]))
    for i in range(n):
        b = f"blk.{i}."
        out += [(b + "attn_norm.weight", [h]), (b + "attn_q.weight", [h, q]),
                (b + "attn_k.weight", [h, kv]), (b + "attn_v.weight", [h, kv]),
                (b + "attn_output.weight", [q, h]), (b + "ffn_norm.weight", [h]),
                (b + "ffn_gate.weight", [h, m["ff"]]), (b + "ffn_up.weight", [h, m["ff"]]),
                (b + "ffn_down.weight", [m["ff"], h])]
        if m.get("bias"):
            out += [(b + "attn_q.bias", [q]), (b + "attn_k.bias", [kv]), (b + "attn_v.bias", [kv])]
        if m["arch"] == "gemma2":
            out += [(b + "post_attention_norm.weight", [h]), (b + "post_ffw_norm.weight", [h])]
    typed = []
    for name, shape in out:
        layer = int(name.split(".")[1]) if name.startswith("blk.") else 0
        t = F32 if len(shape) == 1 else pick(quant, name, shape[0], layer, n, m["tied"])
        typed.append((name, shape, t))
    return typed


class Writer:
    def __init__(self):
        self.b = bytearray()

    def u32(self, v):
        self.b += struct.pack("<I", v)

    def u64(self, v):
        self.b += struct.pack("<Q", v)

    def s(self, text):
        raw = text.encode()
        self.u64(len(raw))
        self.b += raw

    def kv(self, key, vtype, value):
        self.s(key)
        self.u32(vtype)
        if vtype == 4:
            self.u32(value)
        elif vtype == 6:
            self.b += struct.pack("<f", value)
        elif vtype == 8:
            self.s(value)

    def arr(self, key, etype, values):
        self.s(key)
        self.u32(9)
        self.u32(etype)
        self.u64(len(values))
        if etype == 8:
            for v in values:
                self.s(v)
        else:
            self.b += struct.pack("<%d%s" % (len(values), {5: "i", 6: "f"}[etype]), *values)


def random_data(ts, seed):
    """The tensors' bytes: norms 1.0 (f32), the rest f16 uniform in [-0.5, 0.5]."""
    import random
    rng = random.Random(seed)
    out = bytearray()
    for _name, shape, t in ts:
        n = 1
        for d in shape:
            n *= d
        if t == F32:
            out += struct.pack("<%df" % n, *([1.0] * n))
        elif t == F16:
            out += struct.pack("<%de" % n, *(rng.uniform(-0.5, 0.5) for _ in range(n)))
        else:
            sys.exit("mkgguf: --random writes f16 only")
        while len(out) % 32:
            out.append(0)
    return out


def write(path, model, quant, seed=None):
    m = MODELS[model]
    a = m["arch"]
    ts = tensors(m, quant)
    w = Writer()
    nkv = 17 + (2 if "head_dim" in m else 0) + (3 if "swa" in m else 0)
    w.b += b"GGUF"
    w.u32(3)
    w.u64(len(ts))
    w.u64(nkv)
    w.kv("general.architecture", 8, a)
    w.kv("general.name", 8, f"{model}-{quant}")
    w.kv("general.file_type", 4, FILE_TYPE[quant])
    w.kv(f"{a}.context_length", 4, m["ctx"])
    w.kv(f"{a}.embedding_length", 4, m["hidden"])
    w.kv(f"{a}.block_count", 4, m["layers"])
    w.kv(f"{a}.feed_forward_length", 4, m["ff"])
    w.kv(f"{a}.attention.head_count", 4, m["heads"])
    w.kv(f"{a}.attention.head_count_kv", 4, m["kv"])
    w.kv(f"{a}.attention.layer_norm_rms_epsilon", 6, m["eps"])
    w.kv(f"{a}.rope.freq_base", 6, m["rope"])
    if "head_dim" in m:
        w.kv(f"{a}.attention.key_length", 4, m["head_dim"])
        w.kv(f"{a}.attention.value_length", 4, m["head_dim"])
    if "swa" in m:
        w.kv(f"{a}.attention.sliding_window", 4, m["swa"])
        w.kv(f"{a}.attn_logit_softcapping", 6, 50.0)
        w.kv(f"{a}.final_logit_softcapping", 6, 30.0)
    w.kv("tokenizer.ggml.model", 8, "llama")
    w.kv("tokenizer.ggml.bos_token_id", 4, 1)
    w.kv("tokenizer.ggml.eos_token_id", 4, 2)
    toks = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % i for i in range(256)]
    toks += ["t%d" % i for i in range(len(toks), m["vocab"])]
    types = [2, 3, 3] + [6] * 256 + [1] * (m["vocab"] - 259)
    w.arr("tokenizer.ggml.tokens", 8, toks)
    w.arr("tokenizer.ggml.scores", 6, [0.0] * m["vocab"])
    w.arr("tokenizer.ggml.token_type", 5, types)
    off = 0
    for name, shape, t in ts:
        n = 1
        for d in shape:
            n *= d
        w.s(name)
        w.u32(len(shape))
        for d in shape:
            w.u64(d)
        w.u32(t[0])
        w.u64(off)
        off += (n // t[1]) * t[2]
        off = (off + 31) // 32 * 32
    while len(w.b) % 32:
        w.b.append(0)
    with open(path, "wb") as f:
        f.write(w.b)
        if seed is not None:
            f.write(random_data(ts, seed))
        f.truncate(len(w.b) + off)
    return len(w.b) + off


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--list":
        print(" ".join(f"{m}-{q}" for m in MODELS for q in QUANTS))
        return
    args = sys.argv[1:]
    seed = None
    if args[:1] == ["--random"] and len(args) > 1:
        seed = int(args[1])
        args = args[2:]
    if not args:
        sys.exit(__doc__)
    out = args[0]
    os.makedirs(out, exist_ok=True)
    for name in args[1:] or [f"{m}-{q}" for m in MODELS if m != "tiny" for q in QUANTS]:
        model, quant = name.rsplit("-", 1)
        if model not in MODELS or quant not in QUANTS:
            sys.exit(f"mkgguf: {name}: not one of: mkgguf.py --list")
        size = write(os.path.join(out, name + ".gguf"), model, quant, seed)
        print(f"{name}.gguf {size / 2**30:.2f} GiB", flush=True)


if __name__ == "__main__":
    main()
