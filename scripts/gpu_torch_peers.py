#!/usr/bin/env python3
"""PyTorch beside jeirt on the same GPU, for scripts/gpu-check.sh.

Subcommands (each prints JSON lines; the last line is the result):

  probe                 torch and transformers versions, the CUDA device and its memory
  wide DATA             DATA/responses_wide.csv from gen_synth.py's responses_dense.npy (numpy only):
                        the same cells for `jeirt irt fit --format wide` as the peers read
  jeirt-epoch DATA      one JE-IRT training epoch of peer_jeirt_torch.py's model (by-question batches)
  2pl DATA              peer_2pl_torch.py's 2PL fit (Adam or L-BFGS) with the tensors on --device
  encoder               forward passes of MiniLM-, MPNet-base- and ModernBERT-large-sized models built
                        by transformers from a config (AutoModel.from_config: random weights, no hub)

The peers in ../shared/bench/peers run on the CPU as their authors wrote them. jeirt-epoch and 2pl
import the peers' own model and helpers (--peers) and run them on --device with what a GPU needs
and nothing else: the tensors on the device, the by-question batches built on the host (as the peer
builds them, but without a device synchronisation per question) and copied up once per epoch, the
loss summed on the device, torch.cuda.synchronize() around the timed region, and the same float32
precision as jeirt (no TF32). Both run on --device cpu too (scripts/gpu-rehearse.sh does that at a
tiny size).
"""
import argparse
import contextlib
import json
import os
import sys
import time


def emit(d):
    print(json.dumps(d), flush=True)


def import_peers(path):
    sys.path.insert(0, os.path.abspath(path))
    import common  # noqa: E402
    return common


def sync(dev):
    import torch
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def cmd_probe(a):
    out = {"python": sys.version.split()[0]}
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means no PyTorch
        out["torch"] = None
        out["error"] = f"import torch: {e}"
        emit(out)
        return 1
    out["torch"] = torch.__version__
    out["cuda_available"] = torch.cuda.is_available()
    out["torch_cuda"] = torch.version.cuda
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        free, total = torch.cuda.mem_get_info(0)
        out.update(device=p.name, capability=f"{p.major}.{p.minor}", sms=p.multi_processor_count,
                   memory_gib=round(total / 2**30, 1), free_gib=round(free / 2**30, 1))
    try:
        import transformers
        out["transformers"] = transformers.__version__
    except Exception as e:  # noqa: BLE001
        out["transformers"] = None
        out["transformers_error"] = str(e)
    emit(out)
    return 0


def cmd_wide(a):
    """A wide CSV (model, then one column per item; blank = missing) from the dense matrix:
    200 MB for 1,000 x 100,000, written by numpy in seconds (gen_synth.py's long CSV takes
    about a minute at that size)."""
    import numpy as np
    y = np.load(os.path.join(a.data, "responses_dense.npy"))
    n, j = y.shape
    path = os.path.join(a.data, "responses_wide.csv")
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(("model," + ",".join(str(k) for k in range(j)) + "\n").encode())
        for s in range(0, n, 64):
            blk = y[s:s + 64]
            cells = np.empty(blk.shape + (2,), dtype=np.uint8)
            cells[..., 0] = np.where(blk == 1, ord("1"), ord("0"))
            cells[..., 1] = ord(",")
            cells[:, -1, 1] = ord("\n")
            keep = np.ones(cells.shape, dtype=bool)
            keep[..., 0] = blk >= 0
            for r in range(blk.shape[0]):
                f.write(f"{s + r},".encode())
                f.write(cells[r][keep[r]].tobytes())
    os.replace(tmp, path)
    emit({"wide": path, "models": n, "items": j, "observed": int((y >= 0).sum()), "bytes": os.path.getsize(path)})
    return 0


def question_batches(tri, batch, gen):
    """The peer's by-question batches (peer_jeirt_torch.py's question_batches), on the host:
    training pairs sorted by question once; each epoch shuffles the questions and packs them
    greedily into batches of at most `batch` pairs (a larger question is chunked). Returns the
    pairs in batch order, each pair's row in its batch's list of questions, that list, and the
    batch boundaries into both."""
    import numpy as np
    import torch
    order = torch.argsort(tri, stable=True)
    uq, counts = torch.unique_consecutive(tri[order], return_counts=True)
    starts = (torch.cumsum(counts, 0) - counts).tolist()
    counts, uq, order = counts.tolist(), uq.numpy(), order.numpy()

    def epoch():
        pairs, rows, qs, bounds = [], [], [], [(0, 0)]
        size, nq = 0, 0
        for k in torch.randperm(len(uq), generator=gen).tolist():
            s0, c = starts[k], counts[k]
            for off in range(0, c, batch):
                n = min(batch, c - off)
                if size + n > batch and size:
                    bounds.append((bounds[-1][0] + size, bounds[-1][1] + nq))
                    size, nq = 0, 0
                pairs.append(order[s0 + off:s0 + off + n])
                rows.append(np.full(n, nq, dtype=np.int64))
                qs.append(uq[k])
                size += n
                nq += 1
        if size:
            bounds.append((bounds[-1][0] + size, bounds[-1][1] + nq))
        return (torch.from_numpy(np.concatenate(pairs)), torch.from_numpy(np.concatenate(rows)),
                torch.tensor(qs, dtype=torch.int64), bounds)
    return epoch


def cmd_jeirt_epoch(a):
    import numpy as np
    import torch
    import torch.nn as nn
    common = import_peers(a.peers)
    import peer_jeirt_torch as peer
    dev = torch.device(a.device)
    torch.set_float32_matmul_precision("highest")  # float32 products, as jeirt's (no TF32)
    if dev.type == "cpu":
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    y, _ = common.load_responses(a.data)
    feats_np = np.load(os.path.join(a.data, "features.npy")).astype(np.float32)
    (trm, tri, trl), (vam, vai, val), _ = peer.split_pairs(y, a.seed)
    feats = torch.from_numpy(feats_np).to(dev)
    trm_d, trl_d = trm.to(dev), trl.to(dev)
    lossf = nn.BCEWithLogitsLoss()
    gen = torch.Generator().manual_seed(a.seed)
    batches = question_batches(tri, a.batch, gen)

    def new_model():
        m = peer.JEIRT(y.shape[0], feats.shape[1], a.hidden, a.dim)
        if a.dropout > 0:  # jeirt's adapter: W2·dropout(relu(W1·x + c1)) + c2
            lin1, act, lin2 = m.adapter
            m.adapter = nn.Sequential(lin1, act, nn.Dropout(a.dropout), lin2)
        m = m.to(dev).train()
        if a.opt == "adamw":  # decoupled decay, as jeirt's AdamW
            return m, torch.optim.AdamW(m.parameters(), lr=a.lr, weight_decay=a.weight_decay)
        return m, torch.optim.Adam(m.parameters(), lr=a.lr)

    def run_epoch(model, opt, max_steps=None):
        pairs, rows, qs, bounds = batches()
        pairs, rows, qs = pairs.to(dev, non_blocking=True), rows.to(dev, non_blocking=True), qs.to(dev, non_blocking=True)
        tot = torch.zeros((), device=dev)
        steps = 0
        for (p0, q0), (p1, q1) in zip(bounds, bounds[1:]):
            b, inv = pairs[p0:p1], rows[p0:p1]
            m, lab = trm_d[b], trl_d[b]
            opt.zero_grad()
            q = model.question(feats[qs[q0:q1]])
            qn = q.norm(dim=1).clamp_min(1e-6)
            logit = (model.model_emb(m) * q[inv]).sum(dim=1) / qn[inv] - qn[inv]
            loss = lossf(logit, lab)
            loss.backward()
            opt.step()
            tot += loss.detach() * (p1 - p0)
            steps += 1
            if max_steps and steps >= max_steps:
                break
        return tot, steps

    # Warm-up on a model of its own: cuBLAS handles, the allocator, kernel loading.
    wm, wo = new_model()
    run_epoch(wm, wo, max_steps=a.warmup)
    sync(dev)
    del wm, wo
    model, opt = new_model()
    sync(dev)
    t0 = time.perf_counter()
    tot, steps = run_epoch(model, opt)
    sync(dev)
    secs = time.perf_counter() - t0
    train_loss = float(tot) / len(trm)
    model.eval()
    va = peer.accuracy(peer.predict(model, feats, vam.to(dev), vai.to(dev)), val.to(dev))
    emit(dict(method="peer_jeirt_torch by-question on " + str(dev), torch=torch.__version__, device=str(dev),
              n=y.shape[0], j=y.shape[1], n_train=len(trm), d_in=feats.shape[1], hidden=a.hidden, dim=a.dim,
              batch=a.batch, lr=a.lr, dropout=a.dropout, opt=a.opt, weight_decay=a.weight_decay if a.opt == "adamw" else 0,
              steps=steps, warmup_steps=a.warmup, sec_per_epoch=round(secs, 4),
              pairs_per_s=round(len(trm) / secs), train_loss=round(train_loss, 5), val_acc=round(va, 5)))
    return 0


def cmd_2pl(a):
    import numpy as np
    import torch
    import torch.nn.functional as F
    common = import_peers(a.peers)
    dev = torch.device(a.device)
    torch.set_float32_matmul_precision("highest")
    if dev.type == "cpu":
        torch.set_num_threads(a.threads)
    y_np, meta = common.load_responses(a.data)
    sigma = meta.get("sigma", 1.0)
    th0, a0, b0 = common.init_2pl(y_np)
    y = torch.from_numpy((y_np == 1).astype(np.float32)).to(dev)
    w = torch.from_numpy((y_np >= 0).astype(np.float32)).to(dev)
    theta = torch.nn.Parameter(torch.tensor(th0, dtype=torch.float32, device=dev))
    aa = torch.nn.Parameter(torch.tensor(a0, dtype=torch.float32, device=dev))
    bb = torch.nn.Parameter(torch.tensor(b0, dtype=torch.float32, device=dev))
    params = [theta, aa, bb]

    def loss_fn():  # peer_2pl_torch.py's objective, the cells in float32, their sum in float64 as jeirt's
        logits = (theta[:, None] * aa[None, :] + bb[None, :]) / sigma
        return F.binary_cross_entropy_with_logits(logits, y, weight=w, reduction="none").sum(dtype=torch.float64)

    sync(dev)
    t0 = time.perf_counter()
    hist, trace, it, converged = [], [], 0, False
    if a.opt == "adam":  # the peer's Adam loop and stopping rule
        opt = torch.optim.Adam(params, lr=a.lr)
        for it in range(1, a.max_iter + 1):
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            opt.step()
            with torch.no_grad():
                aa.clamp_(min=0.0)
            hist.append(loss.item())
            trace.append((time.perf_counter() - t0, hist[-1]))
            if it > 10 and (hist[-11] - hist[-1]) / (10 * abs(hist[-1])) < a.tol:
                converged = True
                break
            if a.max_seconds and time.perf_counter() - t0 > a.max_seconds:
                break
    else:  # the peer's L-BFGS
        opt = torch.optim.LBFGS(params, lr=1.0, max_iter=a.inner, history_size=10, tolerance_grad=1e-7,
                                tolerance_change=1e-12, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss
        prev = None
        for it in range(1, a.max_iter + 1):
            opt.step(closure)
            with torch.no_grad():
                aa.clamp_(min=0.0)
                cur = loss_fn().item()
            trace.append((time.perf_counter() - t0, cur))
            if prev is not None and abs(prev - cur) / abs(prev) < a.tol:
                converged = True
                break
            prev = cur
            if a.max_seconds and time.perf_counter() - t0 > a.max_seconds:
                break
    sync(dev)
    secs = time.perf_counter() - t0
    common.write_trace(a.trace, trace)
    # The final loss in float64, on the device (common.nll_2pl's sum, without a host pass over N x J).
    with torch.no_grad():
        x = (theta.double()[:, None] * aa.double()[None, :] + bb.double()[None, :]) / sigma
        loss64 = float(F.binary_cross_entropy_with_logits(x, y.double(), weight=w.double(), reduction="sum"))
    emit(dict(method=f"peer_2pl_torch {a.opt} on {dev}", torch=torch.__version__, device=str(dev), n=y_np.shape[0],
              j=y_np.shape[1], n_obs=int((y_np >= 0).sum()), tol=a.tol, seconds=round(secs, 4), iters=it,
              loss=loss64, converged=converged))
    return 0


# The shapes of jeirt's BenchmarkEncoderThroughput (cuda/encoder_sizes_test.go).
ENCODERS = {
    "minilm": ("bert", dict(vocab_size=30522, hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
                            intermediate_size=1536, max_position_embeddings=512, hidden_act="gelu",
                            layer_norm_eps=1e-12)),
    "mpnet_base": ("mpnet", dict(vocab_size=30527, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                                 intermediate_size=3072, max_position_embeddings=514, hidden_act="gelu",
                                 relative_attention_num_buckets=32, layer_norm_eps=1e-5)),
    # reference_compile=False: eager, as the other two (torch.compile's first call would take
    # a minute of the check's budget).
    "modernbert_large": ("modernbert", dict(vocab_size=50368, hidden_size=1024, num_hidden_layers=28,
                                            num_attention_heads=16, intermediate_size=2624,
                                            max_position_embeddings=8192, global_attn_every_n_layers=3,
                                            local_attention=128, reference_compile=False)),
}


def encoder_flops(arch, c, length):
    """jeirt's encoderFLOPs: the linear layers and the two attention products per text."""
    d, ff, n = c["hidden_size"], c["intermediate_size"], length
    mlp = 6 * n * d * ff if arch == "modernbert" else 4 * n * d * ff
    return c["num_hidden_layers"] * (8 * n * d * d + mlp + 4 * n * n * d)


@contextlib.contextmanager
def linear_precision(prec):
    """nn.Linear's product in prec (fp32, tf32 or bf16), everything else as it is."""
    import torch
    import torch.nn.functional as F
    if prec == "fp32":
        yield
        return
    orig = torch.nn.Linear.forward

    def forward(self, x):
        if prec == "tf32":
            torch.backends.cuda.matmul.allow_tf32 = True
            try:
                return orig(self, x)
            finally:
                torch.backends.cuda.matmul.allow_tf32 = False
        w = getattr(self, "_jeirt_bf16", None)
        if w is None or w.shape != self.weight.shape:
            w = self._jeirt_bf16 = self.weight.detach().to(torch.bfloat16)
        out = F.linear(x.to(torch.bfloat16), w).float()
        return out if self.bias is None else out + self.bias
    torch.nn.Linear.forward = forward
    try:
        yield
    finally:
        torch.nn.Linear.forward = orig


def cmd_encoder(a):
    import contextlib
    import torch
    import torch.nn.functional as F
    from transformers import AutoConfig, AutoModel
    dev = torch.device(a.device)
    if dev.type == "cpu":
        torch.set_num_threads(a.threads)
    g = torch.Generator().manual_seed(1)
    for name in a.models.split(","):
        arch, kw = ENCODERS[name]
        cfg = AutoConfig.for_model(arch, **kw)
        t0 = time.perf_counter()
        # Built on the device where torch can (2.0 and later): random weights in a second.
        on = dev if hasattr(dev, "__enter__") else contextlib.nullcontext()
        try:
            with on:
                model = AutoModel.from_config(cfg, attn_implementation="sdpa")
        except (ValueError, TypeError, ImportError, NotImplementedError):
            with on:
                model = AutoModel.from_config(cfg)
        model = model.to(dev).eval()
        attn = getattr(model.config, "_attn_implementation", None)
        params = sum(p.numel() for p in model.parameters())
        build = time.perf_counter() - t0
        ids = torch.randint(3, kw["vocab_size"], (a.batch, a.length), generator=g).to(dev)
        mask = torch.ones(a.batch, a.length, dtype=torch.long, device=dev)
        flops = encoder_flops(arch, kw, a.length)
        for prec in a.precisions.split(","):
            # As jeirt's GPU forward: fp32, float32 products without TF32; tf32 and bf16, the
            # linear layers' products on TF32 tensor cores or on bfloat16 inputs (float32
            # accumulation), and everything else (attention, norms, softmax) in float32.
            torch.set_float32_matmul_precision("highest")

            def forward():
                with torch.inference_mode(), linear_precision(prec):
                    h = model(input_ids=ids, attention_mask=mask).last_hidden_state
                    m = mask.unsqueeze(-1).to(h.dtype)
                    # the pooled vectors come back to the host, as jeirt's do
                    return F.normalize((h * m).sum(1) / m.sum(1), dim=-1).float().cpu()
            forward()  # warm-up
            sync(dev)
            n, t1 = 0, time.perf_counter()
            while n < a.min_iters or time.perf_counter() - t1 < a.min_seconds:
                forward()
                n += 1
                sync(dev)
            secs = time.perf_counter() - t1
            sps = n * a.batch / secs
            emit(dict(model=name, precision=prec, device=str(dev), batch=a.batch, length=a.length, iters=n,
                      sentences_per_s=round(sps, 2), gflops=round(sps * flops / 1e9, 1), attention=attn,
                      params=params, build_s=round(build, 2), torch=torch.__version__))
        del model
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("probe")
    w = sub.add_parser("wide")
    w.add_argument("data")
    for name in ("jeirt-epoch", "2pl"):
        s = sub.add_parser(name)
        s.add_argument("data")
        s.add_argument("--peers", required=True, help="the folder of peer_*.py and common.py")
        s.add_argument("--device", default="cuda")
        s.add_argument("--threads", type=int, default=os.cpu_count())
    je = sub.choices["jeirt-epoch"]
    je.add_argument("--batch", type=int, default=512)
    je.add_argument("--lr", type=float, default=1e-3)
    je.add_argument("--hidden", type=int, default=1536)
    je.add_argument("--dim", type=int, default=256)
    je.add_argument("--seed", type=int, default=0)
    je.add_argument("--warmup", type=int, default=30, help="steps on a throwaway model before the timed epoch")
    je.add_argument("--dropout", type=float, default=0.0, help="adapter dropout, as jeirt's model.dropout")
    je.add_argument("--opt", choices=["adam", "adamw"], default="adam")
    je.add_argument("--weight-decay", type=float, default=0.3, help="AdamW's decoupled decay, as jeirt's train.weight_decay")
    tp = sub.choices["2pl"]
    tp.add_argument("--opt", choices=["adam", "lbfgs"], default="adam")
    tp.add_argument("--lr", type=float, default=0.05)
    tp.add_argument("--tol", type=float, default=1e-6)
    tp.add_argument("--max-iter", type=int, default=5000)
    tp.add_argument("--inner", type=int, default=20)
    tp.add_argument("--max-seconds", type=float, default=None)
    tp.add_argument("--trace", default=None)
    e = sub.add_parser("encoder")
    e.add_argument("--device", default="cuda")
    e.add_argument("--models", default="minilm,mpnet_base,modernbert_large")
    e.add_argument("--precisions", default="fp32,tf32,bf16")
    e.add_argument("--batch", type=int, default=256)
    e.add_argument("--length", type=int, default=128)
    e.add_argument("--min-iters", type=int, default=3)
    e.add_argument("--min-seconds", type=float, default=1.0)
    e.add_argument("--threads", type=int, default=os.cpu_count())
    a = p.parse_args()
    fn = {"probe": cmd_probe, "wide": cmd_wide, "jeirt-epoch": cmd_jeirt_epoch, "2pl": cmd_2pl,
          "encoder": cmd_encoder}[a.cmd]
    return fn(a)


if __name__ == "__main__":
    sys.exit(main())
