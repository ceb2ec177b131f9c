#!/usr/bin/python3
"""Held-out log loss of `jeirt irt fit` under its priors, on the real response matrices.

For each data set under the data root (../shared/data by default) and each seed 1..S:
hold out 10% of the observed cells uniformly at random (numpy default_rng(seed):
the observed cells in row-major order, model by item, a permutation, the first
round(0.1 n) of it held out), write the other 90% as a long CSV (model,item_id,correct),
fit it with jeirt once per configuration, predict the held-out cells from the fit folder
(abilities.csv theta, items.csv a, d and c when present, fit.json settings.sigma:
P = c + (1 - c) sigmoid((theta a + d) / sigma)) and score the mean log loss with the
probabilities clipped to [1e-12, 1 - 1e-12]. Held-out cells whose model or item has no
training cell are dropped from every configuration alike and counted (n_dropped).

A configuration is "LABEL=ARGS": ARGS are extra `jeirt irt fit` arguments (split like a
shell would, no shell involved), or "@torch" for the PyTorch 2PL peer run its authors' way
(scripts/peer_2pl_torch_heldout.py: the peer's Adam on the summed BCE, a >= 0 by clamping,
lr 0.05, its stopping rule; `@torch --lr X --tol X --max-iter N` overrides). Without
--config the list is DEFAULT_CONFIGS below. Differences are against the config labelled
"none" (--baseline).

Output: a markdown report on stdout (per data set and config the mean log loss over
seeds and the config-minus-baseline differences, mean and worst (max over seeds); per
config whether fit.json's converged was true on every fit and the largest item a), one
CSV row per fit to --out (dataset,config,seed,logloss,n_heldout, then n_dropped,
seconds, converged, max_a, iterations, error), progress lines on stderr.

  /usr/bin/python3 scripts/prior-table.py --jeirt /tmp/jeirt [--data-root DIR] [--seeds 10]
      [--grid-seeds N] [--datasets swebench-verified,lsat7] [--config LABEL=ARGS ...]
      [--out /tmp/prior-table.csv] [--work DIR]

--grid-seeds N runs the configs not listed in --full-configs (default: default, none,
torch-2pl) on seeds 1..N only; their differences are then over the seeds they share with
the baseline. scripts/prior-table.sh builds jeirt and runs this.
"""
import argparse
import csv
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# name, path under the data root, layout (model-major wide, item-major wide, pattern table)
DATASETS = [
    ("swebench-verified", "swebench-verified/response_matrix.csv", "models"),
    ("rewardbench", "rewardbench/response_matrix.csv", "models"),
    ("tumlu", "tumlu/response_matrix.csv", "models"),
    ("mmlupro-partial", "mmlupro-partial/response_matrix.csv", "items"),
    ("chembench", "chembench/binary_matrix.csv", "items"),
    ("lsat6", "lsat/LSAT6.csv", "patterns"),
    ("lsat7", "lsat/LSAT7.csv", "patterns"),
]

DEFAULT_CONFIGS = [
    "default=",
    "none=--prior none",
    "1pl-default=--model 1pl",
    "1pl-none=--model 1pl --prior none",
    "a-sd0.5=--prior a=normal(1,0.5)",
    "a-sd0.75=--prior a=normal(1,0.75)",
    "a-sd1.5=--prior a=normal(1,1.5)",
    "d-sd2=--prior d=normal(0,2)",
    "d-sd5=--prior d=normal(0,5)",
    "torch-2pl=@torch",
]

EPS = 1e-12


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def cell(v):
    """'0', '1', '0.0', '1.0' -> 0/1; blank -> -1."""
    v = v.strip()
    if v == "":
        return -1
    f = float(v)
    if f not in (0.0, 1.0):
        raise ValueError(f"not a 0/1 cell: {v!r}")
    return int(f)


def load(path, layout):
    """Return (model names, item names, Y int8 models x items with -1 for missing)."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    hdr, body = rows[0], rows[1:]
    if layout == "patterns":
        fcol = [k for k, h in enumerate(hdr) if h.lower() == "freq"]
        if len(fcol) != 1:
            raise ValueError(f"{path}: no freq column in {hdr}")
        fc = fcol[0]
        items = [h for k, h in enumerate(hdr) if k != fc]
        pats = []
        for r in body:
            pat = [cell(v) for k, v in enumerate(r) if k != fc]
            pats += [pat] * int(float(r[fc]))
        y = np.array(pats, dtype=np.int8)
        models = [f"r{k + 1:04d}" for k in range(y.shape[0])]
        return models, items, y
    names = [r[0] for r in body]
    cols = hdr[1:]
    y = np.array([[cell(v) for v in r[1:]] for r in body], dtype=np.int8)
    if layout == "models":
        return names, cols, y
    return cols, names, np.ascontiguousarray(y.T)


def split(y, seed, frac):
    obs = np.argwhere(y >= 0)                       # row-major: model by item
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(obs))
    nh = int(round(frac * len(obs)))
    held, train = np.sort(perm[:nh]), np.sort(perm[nh:])
    return obs[train], obs[held]


def write_long(path, models, items, y, cells):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "item_id", "correct"])
        for m, i in cells:
            w.writerow([models[m], items[i], int(y[m, i])])


def read_csv(path):
    with open(path, newline="") as f:
        r = csv.reader(f)
        hdr = next(r)
        return hdr, list(r)


def num(v):
    return float(v) if v.strip() != "" else math.nan


def jeirt_predict(fitdir, models, items, rows, cols):
    """P(correct) of the cells (rows, cols) from a jeirt fit folder, plus fit.json."""
    with open(os.path.join(fitdir, "fit.json")) as f:
        fj = json.load(f)
    sigma = float(fj["settings"]["sigma"])
    hdr, body = read_csv(os.path.join(fitdir, "abilities.csv"))
    km, kt = hdr.index("model"), hdr.index("theta")
    theta = {r[km]: num(r[kt]) for r in body}
    hdr, body = read_csv(os.path.join(fitdir, "items.csv"))
    ki = hdr.index("item") if "item" in hdr else hdr.index("item_id")
    ka, kd = hdr.index("a"), hdr.index("d")
    kc = hdr.index("c") if "c" in hdr else None
    ipar = {r[ki]: (num(r[ka]), num(r[kd]), num(r[kc]) if kc is not None else 0.0) for r in body}
    th = np.array([theta.get(models[m], math.nan) for m in rows])
    par = np.array([ipar.get(items[i], (math.nan,) * 3) for i in cols]).reshape(-1, 3)
    x = (th * par[:, 0] + par[:, 1]) / sigma
    with np.errstate(over="ignore"):
        p = par[:, 2] + (1.0 - par[:, 2]) / (1.0 + np.exp(-x))
    amax = max((v[0] for v in ipar.values() if not math.isnan(v[0])), default=math.nan)
    return p, fj, amax


def logloss(p, yv):
    p = np.clip(p, EPS, 1.0 - EPS)
    return float(-np.mean(yv * np.log(p) + (1 - yv) * np.log1p(-p)))


def parse_config(spec):
    if "=" not in spec:
        raise SystemExit(f"--config {spec!r}: want LABEL=ARGS")
    label, args = spec.split("=", 1)
    return label.strip(), shlex.split(args)


def torch_opts(args):
    o = dict(lr=0.05, tol=1e-6, max_iter=5000)
    k = 1
    while k < len(args):
        key = args[k].lstrip("-").replace("-", "_")
        if key not in o or k + 1 >= len(args):
            raise SystemExit(f"@torch: unknown or incomplete option {args[k]!r}")
        o[key] = int(args[k + 1]) if key == "max_iter" else float(args[k + 1])
        k += 2
    return o


def fmt(v, d=5):
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{d}f}"


def fmt_signed(v, d=5):
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:+.{d}f}"


def report(results, configs, baseline, datasets_run, frac, notes):
    out = []
    labels = [c[0] for c in configs]
    out.append("## Held-out log loss (mean over seeds; Δ = config − %s per seed)\n" % baseline)
    out.append(f"{int(frac * 100)}% of observed cells held out per seed; cells whose model or item has no "
               "training cell dropped from every config alike (dropped: total over seeds).\n")
    out.append("| data set | config | seeds | mean log loss | mean Δ vs %s | worst Δ vs %s (max over seeds) | held-out cells per seed | dropped |" % (baseline, baseline))
    out.append("|---|---|---|---|---|---|---|---|")
    for ds in datasets_run:
        base = {r["seed"]: r["logloss"] for r in results if r["dataset"] == ds and r["config"] == baseline}
        for lab in labels:
            rs = [r for r in results if r["dataset"] == ds and r["config"] == lab]
            if not rs:
                continue
            ll = [r["logloss"] for r in rs if not math.isnan(r["logloss"])]
            diffs = [r["logloss"] - base[r["seed"]] for r in rs
                     if r["seed"] in base and not math.isnan(r["logloss"]) and not math.isnan(base[r["seed"]])]
            nh = sorted({r["n_heldout"] for r in rs})
            nhs = str(nh[0]) if len(nh) == 1 else f"{nh[0]}–{nh[-1]}"
            nd = sum(r["n_dropped"] for r in rs)
            bad = len(rs) - len(ll)
            seeds = f"{len(ll)}" + (f" (+{bad} failed)" if bad else "")
            out.append(f"| {ds} | {lab} | {seeds} | {fmt(float(np.mean(ll)) if ll else math.nan)} | "
                       f"{fmt_signed(float(np.mean(diffs)) if diffs else math.nan)} | "
                       f"{fmt_signed(max(diffs) if diffs else math.nan)} | {nhs} | {nd} |")
    out.append("")
    out.append("## Mean held-out log loss, data set by config\n")
    out.append("| data set | " + " | ".join(labels) + " |")
    out.append("|---|" + "---|" * len(labels))
    for ds in datasets_run:
        cells = []
        for lab in labels:
            ll = [r["logloss"] for r in results if r["dataset"] == ds and r["config"] == lab and not math.isnan(r["logloss"])]
            cells.append(fmt(float(np.mean(ll))) if ll else "")
        out.append(f"| {ds} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("## Convergence and largest slope per config\n")
    out.append("converged: fit.json `converged` (torch-2pl: the peer's own stopping rule was met before its "
               "iteration cap). max a: the largest item a in items.csv over all fits (torch-2pl: in jeirt's "
               "gauge, theta mean 0 and population sd 1 over models; raw in brackets).\n")
    out.append("| config | fits | converged on every fit | not converged | failed | max a (data set, seed) | max iterations |")
    out.append("|---|---|---|---|---|---|---|")
    for lab in labels:
        rs = [r for r in results if r["config"] == lab]
        if not rs:
            continue
        ok = [r for r in rs if not r["error"]]
        nc = [r for r in ok if r["converged"] is not True]
        am = [r for r in ok if not math.isnan(r["max_a"])]
        if am:
            top = max(am, key=lambda r: r["max_a"])
            amax = f"{top['max_a']:.4g} ({top['dataset']}, {top['seed']})"
            if top.get("max_a_raw") is not None:
                amax += f" [raw {top['max_a_raw']:.4g}]"
        else:
            amax = "n/a"
        its = max((r["iterations"] for r in ok if r["iterations"] is not None), default=None)
        out.append(f"| {lab} | {len(rs)} | {'yes' if not nc and len(ok) == len(rs) else 'no'} | {len(nc)} | "
                   f"{len(rs) - len(ok)} | {amax} | {its if its is not None else 'n/a'} |")
    out.append("")
    out.append("## Largest item a, data set by config (max over seeds)\n")
    out.append("| data set | " + " | ".join(labels) + " |")
    out.append("|---|" + "---|" * len(labels))
    for ds in datasets_run:
        cells = []
        for lab in labels:
            v = [r["max_a"] for r in results if r["dataset"] == ds and r["config"] == lab and not math.isnan(r["max_a"])]
            cells.append(f"{max(v):.4g}" if v else "")
        out.append(f"| {ds} | " + " | ".join(cells) + " |")
    out.append("")
    if notes:
        out.append("## Problems seen\n")
        for n in notes:
            out.append(f"- {n}")
        out.append("")
    return "\n".join(out)


def report_from_csv(paths, baseline, frac):
    byk, order_c, order_d, notes = {}, [], [], []
    for path in paths:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                conv = {"True": True, "False": False}.get(r["converged"], None)
                rec = dict(dataset=r["dataset"], config=r["config"], seed=int(r["seed"]),
                           logloss=float(r["logloss"]), n_heldout=int(r["n_heldout"]), n_dropped=int(r["n_dropped"]),
                           seconds=float(r["seconds"]), converged=conv, max_a=float(r["max_a"]), max_a_raw=None,
                           iterations=int(r["iterations"]) if r["iterations"] not in ("", "None") else None,
                           error=r["error"], note=r.get("note", ""))
                byk[(rec["dataset"], rec["config"], rec["seed"])] = rec
                if rec["config"] not in order_c:
                    order_c.append(rec["config"])
                if rec["dataset"] not in order_d:
                    order_d.append(rec["dataset"])
    results = list(byk.values())
    for r in results:
        if r["error"]:
            notes.append(f"{r['dataset']} seed {r['seed']} {r['config']}: FAILED: {r['error']}")
        elif r["converged"] is not True:
            notes.append(f"{r['dataset']} seed {r['seed']} {r['config']}: converged={r['converged']}, "
                         f"iterations {r['iterations']}" + (f", note: {r['note']!r}" if r["note"] else ""))
    print(report(results, [(c, None) for c in order_c], baseline, order_d, frac, notes))
    print(f"\n{len(results)} fits from {', '.join(paths)}; fit seconds summed: {sum(r['seconds'] for r in results):.0f}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jeirt", default=os.environ.get("JEIRT", "jeirt"), help="the jeirt binary")
    ap.add_argument("--data-root", default=os.path.normpath(os.path.join(REPO, "..", "shared", "data")))
    ap.add_argument("--datasets", default="", help="comma-separated names (default all): " + ",".join(d[0] for d in DATASETS))
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--grid-seeds", type=int, default=None, help="seeds for configs not in --full-configs (default --seeds)")
    ap.add_argument("--full-configs", default="default,none,torch-2pl")
    ap.add_argument("--config", action="append", default=None, help="LABEL=ARGS (repeat); default: the built-in list")
    ap.add_argument("--configs", default=None, help="the same as --config, several separated by ';'")
    ap.add_argument("--baseline", default="none")
    ap.add_argument("--holdout", type=float, default=0.1)
    ap.add_argument("--out", default="/tmp/prior-table.csv")
    ap.add_argument("--work", default=None, help="scratch folder (default a temporary one, removed at the end)")
    ap.add_argument("--peers", default=None, help="peers folder for torch-2pl (default ../shared/bench/peers)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads for torch-2pl")
    ap.add_argument("--from-csv", default=None,
                    help="print the report from per-fit CSVs written by --out (comma-separated; a later file's "
                         "rows replace an earlier one's for the same data set, config and seed) and fit nothing")
    args = ap.parse_args()
    if args.from_csv:
        return report_from_csv(args.from_csv.split(","), args.baseline, args.holdout)

    if not os.path.isdir(args.data_root):
        log(f"prior-table: data root {args.data_root} not found; nothing to measure (skipped)")
        return 0
    specs = list(args.config or [])
    if args.configs:
        specs += [s for s in args.configs.split(";") if s.strip()]
    configs = [parse_config(s) for s in (specs or DEFAULT_CONFIGS)]
    labels = [c[0] for c in configs]
    if len(set(labels)) != len(labels):
        raise SystemExit("duplicate config labels")
    full = set(s.strip() for s in args.full_configs.split(",") if s.strip())
    grid_seeds = args.grid_seeds if args.grid_seeds is not None else args.seeds
    want = set(s.strip() for s in args.datasets.split(",") if s.strip())
    if any(not c[1] or c[1][0] != "@torch" for c in configs) and shutil.which(args.jeirt) is None:
        raise SystemExit(f"jeirt binary {args.jeirt!r} not found (--jeirt)")
    if any(c[1] and c[1][0] == "@torch" for c in configs):
        sys.path.insert(0, HERE)
        import peer_2pl_torch_heldout as tpeer  # noqa: E402
    work = args.work or tempfile.mkdtemp(prefix="prior-table-")
    os.makedirs(work, exist_ok=True)

    results, notes, datasets_run = [], [], []
    t_start = time.perf_counter()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fout = open(args.out, "w", newline="")
    cw = csv.writer(fout)
    cw.writerow(["dataset", "config", "seed", "logloss", "n_heldout", "n_dropped", "seconds",
                 "converged", "max_a", "iterations", "error", "note"])
    try:
        for name, rel, layout in DATASETS:
            if want and name not in want:
                continue
            path = os.path.join(args.data_root, rel)
            if not os.path.exists(path):
                log(f"prior-table: {path} not found; {name} skipped")
                notes.append(f"{name}: {path} not found, skipped")
                continue
            models, items, y = load(path, layout)
            n_obs = int((y >= 0).sum())
            log(f"{name}: {len(models)} models x {len(items)} items, {n_obs} observed cells, mean correct {float(y[y >= 0].mean()):.4f}")
            datasets_run.append(name)
            for seed in range(1, args.seeds + 1):
                train, held = split(y, seed, args.holdout)
                mtr = np.bincount(train[:, 0], minlength=len(models))
                itr = np.bincount(train[:, 1], minlength=len(items))
                keep = (mtr[held[:, 0]] > 0) & (itr[held[:, 1]] > 0)
                n_drop = int((~keep).sum())
                held = held[keep]
                rows, cols = held[:, 0], held[:, 1]
                yv = y[rows, cols].astype(np.float64)
                sd = os.path.join(work, name, f"seed{seed}")
                os.makedirs(sd, exist_ok=True)
                trainf = os.path.join(sd, "train.csv")
                write_long(trainf, models, items, y, train)
                ytr = None
                for label, cargs in configs:
                    if label not in full and seed > grid_seeds:
                        continue
                    t0 = time.perf_counter()
                    rec = dict(dataset=name, config=label, seed=seed, logloss=math.nan, n_heldout=len(held),
                               n_dropped=n_drop, seconds=math.nan, converged=None, max_a=math.nan,
                               max_a_raw=None, iterations=None, error="", note="")
                    try:
                        if cargs and cargs[0] == "@torch":
                            if ytr is None:
                                ytr = np.full(y.shape, -1, dtype=np.int8)
                                ytr[train[:, 0], train[:, 1]] = y[train[:, 0], train[:, 1]]
                            p, info = tpeer.fit_predict(ytr, rows, cols, peers=args.peers, threads=args.threads,
                                                        **torch_opts(cargs))
                            rec.update(converged=info["converged"], max_a=info["max_a"],
                                       max_a_raw=info["max_a_raw"], iterations=info["iters"])
                            if not info["converged"]:
                                rec["note"] = f"stopped at the iteration cap ({info['iters']})"
                                notes.append(f"{name} seed {seed} {label}: stopped at the iteration cap ({info['iters']}) without meeting its stopping rule")
                        else:
                            fitdir = os.path.join(sd, "fit-" + label)
                            cmd = [args.jeirt, "irt", "fit", "--data", trainf, "--out", fitdir, "--force",
                                   "--format", "long"] + cargs
                            pr = subprocess.run(cmd, capture_output=True, text=True)
                            if pr.returncode != 0:
                                msg = (pr.stderr.strip() or pr.stdout.strip()).splitlines()
                                raise RuntimeError(f"exit {pr.returncode}: " + " / ".join(msg[-3:]))
                            p, fj, amax = jeirt_predict(fitdir, models, items, rows, cols)
                            rec.update(converged=fj.get("converged"), max_a=amax, iterations=fj.get("iterations"))
                            if fj.get("converged") is not True:
                                rec["note"] = str(fj.get("convergence_note", ""))
                                notes.append(f"{name} seed {seed} {label}: fit.json converged={fj.get('converged')}, "
                                             f"iterations {fj.get('iterations')}, note: {fj.get('convergence_note', '')!r}; "
                                             f"stderr: {' / '.join(l for l in pr.stderr.splitlines() if 'converged' in l)[:400]}")
                        bad = int((~np.isfinite(p)).sum())
                        if bad:
                            raise RuntimeError(f"{bad} held-out cells without a finite prediction")
                        rec["logloss"] = logloss(p, yv)
                    except Exception as e:  # one failed fit must not stop the table
                        rec["error"] = str(e)
                        notes.append(f"{name} seed {seed} {label}: FAILED: {e}")
                    rec["seconds"] = time.perf_counter() - t0
                    results.append(rec)
                    cw.writerow([name, label, seed, f"{rec['logloss']:.8f}", rec["n_heldout"], n_drop,
                                 f"{rec['seconds']:.3f}", rec["converged"], f"{rec['max_a']:.6g}",
                                 rec["iterations"], rec["error"], rec["note"]])
                    fout.flush()
                    log(f"{name} seed {seed} {label}: {rec['seconds']:.2f}s logloss {fmt(rec['logloss'])}"
                        + (f" converged={rec['converged']}" if rec["converged"] is not True else "")
                        + (f" ERROR {rec['error']}" if rec["error"] else ""))
                shutil.rmtree(sd, ignore_errors=True)
            log(f"{name}: done, {time.perf_counter() - t_start:.0f}s elapsed")
    except KeyboardInterrupt:
        log("prior-table: interrupted; the report below covers the fits done so far")
        notes.append("interrupted: the run stopped before its last fit")
    finally:
        fout.close()
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    print(report(results, configs, args.baseline, datasets_run, args.holdout, notes))
    print(f"\n{len(results)} fits in {time.perf_counter() - t_start:.0f}s; per-fit rows in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
