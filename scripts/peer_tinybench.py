#!/usr/bin/python3
"""tinyBenchmarks' recipe as its authors run it, on jeirt's own model splits.

The peer of `jeirt irt estimate --eval` (docs/irt.md, "Scores from a few items"). For each
split that `jeirt irt estimate --eval --splits-out SPLITS.csv` wrote (its held-out models),
it does what tinyBenchmarks' tutorials do (felipemaiapolo/tinyBenchmarks, tutorials/
training_irt.ipynb, anchor_points.ipynb, irt.py, utils.py):

1. Item parameters: py-irt's `multidim_2pl` with its hierarchical priors, fitted by
   stochastic variational inference as `py-irt train multidim_2pl --priors hierarchical
   --lr 0.1 --epochs 2000 --seed 42` fits it. pyro cannot be installed here, so the model and
   the mean-field guide are written out in PyTorch exactly as py-irt defines them:
     mu_b, mu_theta, mu_gamma ~ Normal(0, 1e6);  u_b, u_theta, u_gamma ~ Gamma(1, 1)
     theta[i,d] ~ Normal(mu_theta[d], 1/u_theta[d]);  b[j,d] ~ Normal(mu_b[d], 1/u_b[d]);
     gamma[j,d] ~ Normal(mu_gamma[d], 1/u_gamma[d])
     y[i,j] ~ Bernoulli(logit = sum_d gamma[j,d] (theta[i,d] - b[j,d]))
   guide: Normal(loc, scale) for every theta, b, gamma (loc 0, scale 1 at the start) and
   mu (loc 0, scale 100), Gamma(alpha, beta) for every u (1, 1 at the start); the ELBO
   estimated with one reparameterised sample per step (pyro's Trace_ELBO), full batch, Adam
   at lr 0.1 decayed by 0.9999 per epoch (py-irt's ExponentialLR), and the parameters of the
   epoch with the lowest loss kept (py-irt's best_parameters.json): A = loc_disc,
   B = loc_diff.
2. The dimension D from {5, 10} as training_irt.ipynb chooses it: every 5th training model
   is a validation model, the others are fitted, each validation model's theta estimated
   from the even-numbered items and the error of its predicted mean on the odd-numbered ones
   averaged; the D with the lower error is refitted on all training models. That error is
   gp-IRT's b.
3. Anchors as anchor_points.ipynb: KMeans(n_clusters=K, random_state=42, n_init="auto") on
   the items' correctness patterns over the training models (a missing cell as the item's
   mean), the item nearest each centre, weighted by its cluster's share of the items.
4. Estimators (irt.py, tinyBenchmarks/__init__.py): theta by BFGS on the anchors' answers
   under utils.item_curve, z = sum_d (A[j,d] theta_d - B[j,d]) (tinyBenchmarks' curve,
   not py-irt's gamma (theta - b): the authors' code, kept as it is); naive = the weighted
   mean of the anchors' answers; p-IRT = (|seen|/n) mean(seen) + (1 - |seen|/n)
   mean(curve over unseen); gp-IRT = lambda naive + (1 - lambda) p-IRT with lambda =
   b^2 / (v/(4K) + b^2), v the mean over training models of the variance of their answers.
   Plus "random": the mean of K items drawn uniformly (seeded), the floor every method
   must beat.

The truth of a held-out model is the mean of all its answers, as jeirt's --eval has it; the
same held-out models, the same K. tinyBenchmarks gives no intervals, so there is no coverage.

Usage (scripts/tinybench-table.sh runs jeirt and this on the same splits):
  peer_tinybench.py --data MATRIX.csv --splits SPLITS.csv [--budget K] [--epochs 2000]
                    [--dims 5,10] [--max-splits N] [--threads 2]
MATRIX.csv: a wide response matrix, model-major (first header cell "model") or item-major
(any other first header cell, one column per model); 0/1 labels, blank/NA/NaN missing.
"""
import argparse
import csv
import math
import sys
import time
from collections import defaultdict

import numpy as np
import torch
from scipy.optimize import minimize
from sklearn.cluster import KMeans


def read_matrix(path):
    """Read a wide 0/1 matrix; return (models, items, Y float array with NaN missing)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head, body = rows[0], rows[1:]

    def val(s, where):
        s = s.strip()
        if s in ("", "NA", "NaN", "nan"):
            return math.nan
        x = float(s)
        if x not in (0.0, 1.0):
            raise SystemExit(f"{path}: {where}: label {s!r} is not 0/1 (this peer reads binary matrices)")
        return x

    if head[0].strip().lower() == "model":
        models, items = [r[0] for r in body], head[1:]
        Y = np.array([[val(s, f"line {k + 2}") for s in r[1:]] for k, r in enumerate(body)], dtype=float)
    else:
        models, items = head[1:], [r[0] for r in body]
        Y = np.array([[val(s, f"line {k + 2}") for s in r[1:]] for k, r in enumerate(body)], dtype=float).T
    return models, items, Y


def read_splits(path):
    splits = defaultdict(list)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            splits[int(row["split"])].append(row["model"])
    return [splits[k] for k in sorted(splits)]


def fit_multidim_2pl(Y, dims, epochs=2000, lr=0.1, lr_decay=0.9999, seed=42, log=None):
    """py-irt's multidim_2pl, hierarchical priors, SVI; returns (A, B) as J x D arrays."""
    torch.manual_seed(seed)
    N, J = Y.shape
    obs = ~np.isnan(Y)
    subj, item = np.nonzero(obs)
    subj_t, item_t = torch.from_numpy(subj), torch.from_numpy(item)
    y_t = torch.from_numpy(Y[obs].astype(np.float32))
    D = dims
    Normal, Gamma = torch.distributions.Normal, torch.distributions.Gamma
    softplus = torch.nn.functional.softplus

    def pos(x):  # pyro's positive constraint is exp; keep the unconstrained log
        return torch.nn.Parameter(torch.log(torch.as_tensor(x, dtype=torch.float32)))

    P = {
        "loc_mu_b": torch.nn.Parameter(torch.zeros(D)), "scale_mu_b": pos(1e2 * torch.ones(D)),
        "loc_mu_theta": torch.nn.Parameter(torch.zeros(D)), "scale_mu_theta": pos(1e2 * torch.ones(D)),
        "loc_mu_gamma": torch.nn.Parameter(torch.zeros(D)), "scale_mu_gamma": pos(1e2 * torch.ones(D)),
        "alpha_b": pos(torch.ones(D)), "beta_b": pos(torch.ones(D)),
        "alpha_theta": pos(torch.ones(D)), "beta_theta": pos(torch.ones(D)),
        "alpha_gamma": pos(torch.ones(D)), "beta_gamma": pos(torch.ones(D)),
        "loc_ability": torch.nn.Parameter(torch.zeros(N, D)), "scale_ability": pos(torch.ones(N, D)),
        "loc_diff": torch.nn.Parameter(torch.zeros(J, D)), "scale_diff": pos(torch.ones(J, D)),
        "loc_disc": torch.nn.Parameter(torch.zeros(J, D)), "scale_disc": pos(torch.ones(J, D)),
    }
    positive = {k for k in P if k.startswith(("scale", "alpha", "beta"))}

    def get(k):
        return torch.exp(P[k]) if k in positive else P[k]

    prior_mu = Normal(torch.tensor(0.0), torch.tensor(1.0e6))
    prior_u = Gamma(torch.tensor(1.0), torch.tensor(1.0))

    def neg_elbo():
        lp, lq = 0.0, 0.0
        mus, us = {}, {}
        for name in ("b", "theta", "gamma"):
            q_mu = Normal(get("loc_mu_" + name), get("scale_mu_" + name))
            mu = q_mu.rsample()
            q_u = Gamma(get("alpha_" + name), get("beta_" + name))
            u = q_u.rsample().clamp_min(1e-12)
            lq = lq + q_mu.log_prob(mu).sum() + q_u.log_prob(u).sum()
            lp = lp + prior_mu.log_prob(mu).sum() + prior_u.log_prob(u).sum()
            mus[name], us[name] = mu, u
        latent = {}
        for name, loc, scale in (("theta", "loc_ability", "scale_ability"), ("b", "loc_diff", "scale_diff"),
                                 ("gamma", "loc_disc", "scale_disc")):
            q = Normal(get(loc), get(scale))
            z = q.rsample()
            lq = lq + q.log_prob(z).sum()
            lp = lp + Normal(mus[name], 1.0 / us[name]).log_prob(z).sum()
            latent[name] = z
        logits = (latent["gamma"][item_t] * (latent["theta"][subj_t] - latent["b"][item_t])).sum(-1)
        ll = -torch.nn.functional.binary_cross_entropy_with_logits(logits, y_t, reduction="sum")
        return -(lp + ll - lq)

    opt = torch.optim.Adam(P.values(), lr=lr)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=lr_decay)
    best, best_state = math.inf, None
    for epoch in range(epochs):
        opt.zero_grad()
        loss = neg_elbo()
        loss.backward()
        opt.step()
        sched.step()
        v = float(loss)
        if v < best:
            best = v
            best_state = (P["loc_disc"].detach().clone(), P["loc_diff"].detach().clone())
        if log and (epoch % 500 == 0 or epoch == epochs - 1):
            log(f"  D={D} epoch {epoch + 1}: loss {v:.1f} (best {best:.1f})")
    A, B = best_state
    return A.numpy().astype(float), B.numpy().astype(float)


def item_curve(theta, A, B):
    """tinyBenchmarks' utils.item_curve for one theta (D,) and items A, B (J x D)."""
    z = np.clip(A * theta[None, :] - B, -30, 30).sum(axis=1)
    return 1 / (1 + np.exp(-z))


def estimate_theta(y, A, B, eps=1e-10):
    """irt.estimate_ability_parameters: BFGS from zero on the answers y to items A, B."""
    D = A.shape[1]

    def nll(x):
        p = item_curve(x, A, B)
        return -np.sum(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))

    return minimize(nll, np.zeros(D), method="BFGS").x


def anchors(Ytrain, K, seed=42):
    """anchor_points.ipynb: KMeans on the items' correctness patterns; (items, weights)."""
    X = Ytrain.copy()
    means = np.nanmean(np.where(np.isnan(X), np.nan, X), axis=0)
    means = np.where(np.isnan(means), 0.5, means)
    X = np.where(np.isnan(X), means[None, :], X).T  # items x models
    km = KMeans(n_clusters=K, random_state=seed, n_init="auto").fit(X)
    d = ((X[:, None, :] - km.cluster_centers_[None, :, :]) ** 2).sum(-1)
    idx = [int(np.argmin(d[:, k])) for k in range(K)]
    w = np.array([np.mean(km.labels_ == k) for k in range(K)])
    return idx, w


def choose_dims(Ytrain, dims, epochs, log):
    """training_irt.ipynb: every 5th model validates; returns (D, b of that D)."""
    N, J = Ytrain.shape
    val = list(range(0, N, 5))
    fit_rows = [i for i in range(N) if i not in val]
    seen, unseen = np.arange(0, J, 2), np.arange(1, J, 2)
    errs = []
    for D in dims:
        A, B = fit_multidim_2pl(Ytrain[fit_rows], D, epochs=epochs, log=log)
        e = []
        for i in val:
            y = Ytrain[i]
            s = seen[~np.isnan(y[seen])]
            u = unseen[~np.isnan(y[unseen])]
            if len(s) == 0 or len(u) == 0:
                continue
            th = estimate_theta(y[s], A[s], B[s])
            e.append(abs(item_curve(th, A, B)[u].mean() - y[u].mean()))
        errs.append(float(np.mean(e)))
    k = int(np.argmin(errs))
    return dims[k], errs[k]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--splits", required=True, help="jeirt irt estimate --eval --splits-out's CSV")
    ap.add_argument("--budget", type=int, default=0, help="K (0: min(100, 10%% of the items), as jeirt)")
    ap.add_argument("--epochs", type=int, default=2000)
    ap.add_argument("--dims", default="5,10")
    ap.add_argument("--max-splits", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    log = None if a.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    models, items, Y = read_matrix(a.data)
    J = len(items)
    K = a.budget or max(1, min(100, J // 10))
    dims = [int(x) for x in a.dims.split(",")]
    splits = read_splits(a.splits)
    if a.max_splits:
        splits = splits[: a.max_splits]
    row = {m: i for i, m in enumerate(models)}
    acc = np.array([np.nanmean(Y[i]) for i in range(len(models))])
    answered = [i for i in range(len(models)) if not np.all(np.isnan(Y[i]))]
    order = sorted(answered, key=lambda i: acc[i])
    n10 = max(1, round(0.1 * len(order)))
    low, high = set(order[:n10]), set(order[-n10:])
    names = ["naive", "p-irt", "gp-irt", "random"]
    per_split = {n: [] for n in names}
    tails = {n: {"low": [], "high": []} for n in names}
    chosen = []
    start = time.time()
    for s, held in enumerate(splits):
        test = [row[m] for m in held]
        train = [i for i in range(len(models)) if i not in set(test)]
        Ytr = Y[train]
        D, b = choose_dims(Ytr, dims, a.epochs, log)
        chosen.append(D)
        A, B = fit_multidim_2pl(Ytr, D, epochs=a.epochs, log=log)
        idx, w = anchors(Ytr, K)
        v = np.nanmean(np.nanvar(Ytr, axis=1))
        lam = b ** 2 / (v / (4 * K) + b ** 2)
        rng = np.random.default_rng(1000 + s)
        errs = {n: [] for n in names}
        for i in test:
            y = Y[i]
            target = np.nonzero(~np.isnan(y))[0]
            truth = y[target].mean()
            sel = [j for j in idx if not np.isnan(y[j])]
            if not sel:
                continue
            ws = np.array([w[idx.index(j)] for j in sel])
            naive = float((ws * y[sel]).sum() / ws.sum())
            th = estimate_theta(y[sel], A[sel], B[sel])
            unseen = np.setdiff1d(target, sel)
            frac = len(sel) / len(target)
            pirt = frac * y[sel].mean() + (1 - frac) * (item_curve(th, A, B)[unseen].mean() if len(unseen) else 0)
            gp = lam * naive + (1 - lam) * pirt
            rnd = y[rng.choice(target, size=min(K, len(target)), replace=False)].mean()
            for n, est in zip(names, (naive, pirt, gp, rnd)):
                e = abs(est - truth)
                errs[n].append(e)
                if i in low:
                    tails[n]["low"].append(e)
                if i in high:
                    tails[n]["high"].append(e)
        for n in names:
            per_split[n].append(float(np.mean(errs[n])))
        if log:
            log(f"split {s + 1}/{len(splits)}: D={D}, b={b:.4f}, lambda={lam:.3f}, "
                + ", ".join(f"{n} {per_split[n][-1]:.4f}" for n in names) + f" ({time.time() - start:.0f}s)")
    print(f"{a.data}: {len(models)} models x {J} items; K = {K}; {len(splits)} splits (jeirt's); "
          f"tinyBenchmarks as its authors run it (py-irt multidim_2pl, hierarchical priors, SVI "
          f"{a.epochs} epochs; D from {dims} on validation models, chosen: {sorted(set(chosen))})\n")
    print("| estimator | MAE (mean ± sd over splits) | lowest tenth: MAE (n) | highest tenth: MAE (n) |")
    print("|---|---|---|---|")
    label = {"naive": "anchor-correct + naive", "p-irt": "anchor-correct + p-IRT", "gp-irt": "anchor-correct + gp-IRT",
             "random": f"random {K} + mean"}
    for n in names:
        m = np.mean(per_split[n])
        sd = np.std(per_split[n], ddof=1) if len(per_split[n]) > 1 else 0.0
        lo, hi = tails[n]["low"], tails[n]["high"]
        fmt = lambda x: f"{np.mean(x):.4f} ({len(x)})" if x else "n/a"
        print(f"| {label[n]} | {m:.4f} ± {sd:.4f} | {fmt(lo)} | {fmt(hi)} |")


if __name__ == "__main__":
    main()
