#!/usr/bin/env python3
"""Time a MiniLM-sized BERT forward pass in PyTorch on this CPU.

The same shape as transformer.BenchmarkBERTMiniLM: 6 layers, hidden 384, 12 heads,
intermediate 1536, 128 tokens, random N(0, 0.02) weights, exact erf GELU,
float32, no_grad. Prints sentences/s and GFLOP/s per batch size.

    /usr/bin/python3 scripts/bench_bert_torch.py [--threads 2] [--batches 1,32]
"""
import argparse
import math
import time

import torch
import torch.nn.functional as F

L, D, H, FF, LAYERS, VOCAB = 128, 384, 12, 1536, 6, 30522


def flops(l=L):
    return LAYERS * (8 * l * D * D + 4 * l * D * FF + 4 * l * l * D)


def make_weights(g):
    def n(*shape):
        return torch.randn(*shape, generator=g) * 0.02

    w = {"word": n(VOCAB, D), "pos": n(512, D), "type": n(2, D),
         "ln_w": 1 + n(D), "ln_b": n(D), "layers": []}
    for _ in range(LAYERS):
        w["layers"].append({
            "q": (n(D, D), n(D)), "k": (n(D, D), n(D)), "v": (n(D, D), n(D)),
            "o": (n(D, D), n(D)), "i": (n(FF, D), n(FF)), "out": (n(D, FF), n(D)),
            "ln1": (1 + n(D), n(D)), "ln2": (1 + n(D), n(D)),
        })
    return w


def forward(w, ids, mask):
    b, l = ids.shape
    x = w["word"][ids] + w["type"][0] + w["pos"][:l]
    x = F.layer_norm(x, (D,), w["ln_w"], w["ln_b"], 1e-12)
    add = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
    dh = D // H
    for lw in w["layers"]:
        def heads(t):
            return t.view(b, l, H, dh).transpose(1, 2)
        q, k, v = (heads(F.linear(x, *lw[n])) for n in ("q", "k", "v"))
        s = q @ k.transpose(-1, -2) / math.sqrt(dh) + add
        ctx = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, l, D)
        x = F.layer_norm(x + F.linear(ctx, *lw["o"]), (D,), *lw["ln1"], 1e-12)
        h = F.gelu(F.linear(x, *lw["i"]))
        x = F.layer_norm(x + F.linear(h, *lw["out"]), (D,), *lw["ln2"], 1e-12)
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--seconds", type=float, default=10)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    g = torch.Generator().manual_seed(0)
    w = make_weights(g)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"MKL {torch.backends.mkl.is_available()}, oneDNN {torch.backends.mkldnn.is_available()}")
    with torch.no_grad():
        for bsz in (int(s) for s in a.batches.split(",")):
            ids = torch.randint(0, VOCAB, (bsz, L), generator=g)
            mask = torch.ones(bsz, L, dtype=torch.long)
            forward(w, ids, mask)  # warm up
            n, t0, c0 = 0, time.perf_counter(), time.process_time()
            while n == 0 or time.perf_counter() - t0 < a.seconds:
                forward(w, ids, mask)
                n += 1
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            sps = n * bsz / dt
            # GFLOP per CPU-second (all threads) holds up on a shared machine.
            print(f"torch batch={bsz}: {sps:.2f} sentences/s, {sps * flops() / 1e9:.2f} GFLOP/s, "
                  f"{n * bsz * flops() / 1e9 / cpu:.2f} GFLOP/cpu-s ({n} runs, {dt:.1f} s)")


if __name__ == "__main__":
    main()
