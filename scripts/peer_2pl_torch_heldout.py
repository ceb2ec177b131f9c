#!/usr/bin/python3
"""The PyTorch 2PL peer run its authors' way, predicting held-out cells.

../shared/bench/peers/peer_2pl_torch.py fits 2PL joint maximum likelihood with torch but
writes only a JSON summary (seconds, loss, recovery correlations), never its parameters,
so it cannot predict held-out cells. This wrapper imports the peer's own helpers
(common.init_2pl, common.std_gauge) and repeats its default path line for line: full-batch
dense float32 tensors, BCEWithLogits summed over observed cells via a 0/1 weight,
nn.Parameter theta/a/b, Adam(lr=0.05), a >= 0 by clamping after each step, stop when
(L_{k-10} - L_k) / (10 |L_k|) < 1e-6 or after 5000 steps, sigma 1, 2 threads.
No prior: it is the unpenalised JML objective, as the peer has it.

As a module: fit_predict(y, rows, cols) -> (probabilities of the cells (rows, cols), info).
As a script:  peer_2pl_torch_heldout.py TRAIN.csv HELDOUT.csv PRED.csv
  TRAIN.csv: model,item_id,correct (long); HELDOUT.csv: model,item_id (more columns ignored);
  PRED.csv: model,item_id,p (blank p where the model or item has no training cell);
  a JSON summary line on stdout.

--peers DIR (or $JEIRT_PEERS) is the peers folder (default ../shared/bench/peers from the
repository root).
"""
import argparse
import csv
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PEERS = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "bench", "peers"))


def import_common(peers=None):
    peers = peers or os.environ.get("JEIRT_PEERS") or DEFAULT_PEERS
    if peers not in sys.path:
        sys.path.insert(0, peers)
    import common  # noqa: E402  (the peers' own helpers)
    return common


def fit_predict(y_np, rows, cols, lr=0.05, tol=1e-6, max_iter=5000, sigma=1.0, threads=2, peers=None):
    """Fit the peer's 2PL on y_np (int8 N x J: 1, 0, -1 missing); return P(correct) at (rows, cols)."""
    common = import_common(peers)
    torch.set_num_threads(threads)
    th0, a0, b0 = common.init_2pl(y_np)
    y = torch.from_numpy((y_np == 1).astype(np.float32))
    w = torch.from_numpy((y_np >= 0).astype(np.float32))
    theta = torch.nn.Parameter(torch.tensor(th0, dtype=torch.float32))
    a = torch.nn.Parameter(torch.tensor(a0, dtype=torch.float32))
    b = torch.nn.Parameter(torch.tensor(b0, dtype=torch.float32))
    params = [theta, a, b]

    def loss_fn():
        logits = (theta[:, None] * a[None, :] + b[None, :]) / sigma
        return F.binary_cross_entropy_with_logits(logits, y, weight=w, reduction="sum")

    t0 = time.perf_counter()
    hist = []
    converged = False
    it = 0
    opt = torch.optim.Adam(params, lr=lr)
    for it in range(1, max_iter + 1):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        with torch.no_grad():
            a.clamp_(min=0.0)
        hist.append(loss.item())
        if it > 10 and (hist[-11] - hist[-1]) / (10 * abs(hist[-1])) < tol:
            converged = True
            break
    secs = time.perf_counter() - t0
    th, aa, bb = (t.detach().numpy().astype(np.float64) for t in params)
    x = (th[rows] * aa[cols] + bb[cols]) / sigma
    with np.errstate(over="ignore"):
        p = 1.0 / (1.0 + np.exp(-x))
    # a in the gauge jeirt reports (theta mean 0, population sd 1 over models), for comparison
    _, a_std, _ = common.std_gauge(th, aa, bb)
    info = dict(converged=converged, iters=int(it), seconds=secs,
                loss=common.nll_2pl(y_np, th, aa, bb, sigma),
                max_a_raw=float(aa.max()), max_a=float(a_std.max()))
    return p, info


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("train")
    ap.add_argument("heldout")
    ap.add_argument("pred")
    ap.add_argument("--peers", default=None)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--max-iter", type=int, default=5000)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    mi, ii, cells = {}, {}, []
    with open(args.train, newline="") as f:
        r = csv.reader(f)
        next(r)
        for m, i, c in r:
            cells.append((mi.setdefault(m, len(mi)), ii.setdefault(i, len(ii)), int(float(c))))
    y = np.full((len(mi), len(ii)), -1, dtype=np.int8)
    arr = np.array(cells, dtype=np.int64)
    y[arr[:, 0], arr[:, 1]] = arr[:, 2]
    with open(args.heldout, newline="") as f:
        r = csv.reader(f)
        next(r)
        held = [(row[0], row[1]) for row in r]
    ok = [k for k, (m, i) in enumerate(held) if m in mi and i in ii]
    rows = np.array([mi[held[k][0]] for k in ok], dtype=np.int64)
    cols = np.array([ii[held[k][1]] for k in ok], dtype=np.int64)
    p, info = fit_predict(y, rows, cols, args.lr, args.tol, args.max_iter, threads=args.threads, peers=args.peers)
    pk = dict(zip(ok, p))
    with open(args.pred, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "item_id", "p"])
        for k, (m, i) in enumerate(held):
            w.writerow([m, i, repr(float(pk[k])) if k in pk else ""])
    print(json.dumps(info), flush=True)


if __name__ == "__main__":
    main()
