#!/usr/bin/env python3
"""Time the encoders' forward passes in PyTorch on this CPU.

The same shapes as the Go benchmarks of encoder/transformer, with random
N(0, 0.02) weights, exact erf GELU, float32, no_grad, 128 tokens:

  minilm            BERT, 6 layers, hidden 384, 12 heads, intermediate 1536
                    (BenchmarkBERTMiniLM)
  mpnet-base        MPNet, 12 layers, hidden 768, 12 heads, 3072, relative
                    position bias (BenchmarkMPNetBase)
  modernbert-base   ModernBERT, 22 layers, hidden 768, 12 heads, GeGLU 1152,
                    RoPE, sliding window +-64 in two layers of three
                    (BenchmarkModernBERTBase)
  modernbert-large  ModernBERT, 28 layers, hidden 1024, 16 heads, GeGLU 2624
                    (BenchmarkModernBERTLarge)

Prints one line per model and batch size: sentences/s, GFLOP/s (the Go
benchmarks' FLOP counts) and GFLOP per CPU-second.

    /usr/bin/python3 scripts/bench_bert_torch.py [--threads 2] [--model minilm] [--batches 1,32] [--seconds 10]
"""
import argparse
import math
import time

import torch
import torch.nn.functional as F

L = 128

MODELS = {
    "minilm": dict(arch="bert", layers=6, d=384, heads=12, ff=1536, vocab=30522),
    "mpnet-base": dict(arch="mpnet", layers=12, d=768, heads=12, ff=3072, vocab=30527),
    "modernbert-base": dict(arch="modernbert", layers=22, d=768, heads=12, ff=1152, vocab=50368),
    "modernbert-large": dict(arch="modernbert", layers=28, d=1024, heads=16, ff=2624, vocab=50368),
}


def flops(m, l=L):
    d, ff, n = m["d"], m["ff"], m["layers"]
    if m["arch"] == "modernbert":
        return n * (8 * l * d * d + 6 * l * d * ff + 4 * l * l * d)
    return n * (8 * l * d * d + 4 * l * d * ff + 4 * l * l * d)


def make_weights(m, g):
    d, ff = m["d"], m["ff"]

    def n(*shape):
        return torch.randn(*shape, generator=g) * 0.02

    if m["arch"] == "modernbert":
        w = {"tok": n(m["vocab"], d), "emb_norm": 1 + n(d), "final_norm": 1 + n(d), "layers": []}
        for i in range(m["layers"]):
            w["layers"].append({
                "attn_norm": None if i == 0 else 1 + n(d), "wqkv": n(3 * d, d), "wo": n(d, d),
                "mlp_norm": 1 + n(d), "wi": n(2 * ff, d), "wmo": n(d, ff),
            })
        return w
    w = {"word": n(m["vocab"], d), "pos": n(514, d), "type": n(2, d),
         "ln_w": 1 + n(d), "ln_b": n(d), "rel_bias": n(32, m["heads"]), "layers": []}
    for _ in range(m["layers"]):
        w["layers"].append({
            "q": (n(d, d), n(d)), "k": (n(d, d), n(d)), "v": (n(d, d), n(d)),
            "o": (n(d, d), n(d)), "i": (n(ff, d), n(ff)), "out": (n(d, ff), n(d)),
            "ln1": (1 + n(d), n(d)), "ln2": (1 + n(d), n(d)),
        })
    return w


def relative_position_bucket(rel, num_buckets=32, max_distance=128):
    """Hugging Face MPNet's relative_position_bucket (after T5)."""
    ret = 0
    n = -rel
    num_buckets //= 2
    ret += (n < 0).to(torch.long) * num_buckets
    n = torch.abs(n)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    large = max_exact + (torch.log(n.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return ret + torch.where(is_small, n, large)


def forward_post_norm(m, w, ids, mask):
    """BERT (absolute positions) and MPNet (relative position bias): post-LN."""
    b, l = ids.shape
    d, h = m["d"], m["heads"]
    dh = d // h
    eps = 1e-12 if m["arch"] == "bert" else 1e-5
    if m["arch"] == "bert":
        x = w["word"][ids] + w["type"][0] + w["pos"][:l]
    else:  # MPNet: positions from padding_idx + 1 = 2
        x = w["word"][ids] + w["pos"][2:l + 2]
    x = F.layer_norm(x, (d,), w["ln_w"], w["ln_b"], eps)
    add = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
    if m["arch"] == "mpnet":
        pos = torch.arange(l)
        bucket = relative_position_bucket(pos[None, :] - pos[:, None])
        add = add + w["rel_bias"][bucket].permute(2, 0, 1)[None]
    for lw in w["layers"]:
        def heads(t):
            return t.view(b, l, h, dh).transpose(1, 2)
        q, k, v = (heads(F.linear(x, *lw[n])) for n in ("q", "k", "v"))
        s = q @ k.transpose(-1, -2) / math.sqrt(dh) + add
        ctx = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, l, d)
        x = F.layer_norm(x + F.linear(ctx, *lw["o"]), (d,), *lw["ln1"], eps)
        hh = F.gelu(F.linear(x, *lw["i"]))
        x = F.layer_norm(x + F.linear(hh, *lw["out"]), (d,), *lw["ln2"], eps)
    return x


def rope(theta, dh, l):
    inv = 1.0 / theta ** (torch.arange(0, dh, 2, dtype=torch.float32) / dh)
    a = torch.arange(l, dtype=torch.float32)[:, None] * inv[None, :]
    emb = torch.cat([a, a], -1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1, x2 = x.chunk(2, -1)
    return torch.cat([-x2, x1], -1)


def forward_modernbert(m, w, ids, mask):
    """ModernBertModel, eager attention: pre-LN, RoPE, GeGLU, sliding windows."""
    b, l = ids.shape
    d, h, ff = m["d"], m["heads"], m["ff"]
    dh = d // h
    x = F.layer_norm(w["tok"][ids], (d,), w["emb_norm"], None, 1e-5)
    neg = torch.finfo(torch.float32).min
    glob = (1.0 - mask[:, None, None, :].float()) * neg
    pos = torch.arange(l)
    far = (pos[None, :] - pos[:, None]).abs() > 64
    local = glob.masked_fill(far[None, None], neg)
    ropes = {True: rope(160000.0, dh, l), False: rope(10000.0, dh, l)}
    for i, lw in enumerate(w["layers"]):
        is_global = i % 3 == 0
        y = x if lw["attn_norm"] is None else F.layer_norm(x, (d,), lw["attn_norm"], None, 1e-5)
        qkv = F.linear(y, lw["wqkv"]).view(b, l, 3, h, dh)
        q, k, v = (qkv[:, :, j].transpose(1, 2) for j in range(3))
        cos, sin = ropes[is_global]
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        s = q @ k.transpose(-1, -2) / math.sqrt(dh) + (glob if is_global else local)
        ctx = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, l, d)
        x = x + F.linear(ctx, lw["wo"])
        a, gate = F.linear(F.layer_norm(x, (d,), lw["mlp_norm"], None, 1e-5), lw["wi"]).chunk(2, -1)
        x = x + F.linear(F.gelu(a) * gate, lw["wmo"])
    return F.layer_norm(x, (d,), w["final_norm"], None, 1e-5)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--model", default="minilm", help=", ".join(MODELS))
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--seconds", type=float, default=10)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    m = MODELS[a.model]
    g = torch.Generator().manual_seed(0)
    w = make_weights(m, g)
    fwd = forward_modernbert if m["arch"] == "modernbert" else forward_post_norm
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"MKL {torch.backends.mkl.is_available()}, oneDNN {torch.backends.mkldnn.is_available()}")
    with torch.no_grad():
        for bsz in (int(s) for s in a.batches.split(",")):
            ids = torch.randint(4, m["vocab"], (bsz, L), generator=g)
            mask = torch.ones(bsz, L, dtype=torch.long)
            fwd(m, w, ids, mask)  # warm up
            n, t0, c0 = 0, time.perf_counter(), time.process_time()
            while n == 0 or time.perf_counter() - t0 < a.seconds:
                fwd(m, w, ids, mask)
                n += 1
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            sps = n * bsz / dt
            # GFLOP per CPU-second (all threads) holds up on a shared machine.
            print(f"torch {a.model} batch={bsz}: {sps:.3f} sentences/s, {sps * flops(m) / 1e9:.2f} GFLOP/s, "
                  f"{n * bsz * flops(m) / 1e9 / cpu:.2f} GFLOP/cpu-s ({n} runs, {dt:.1f} s)")


if __name__ == "__main__":
    main()
