# A second, independent reading of the harness-log fixtures for
# fixtures_test.go: plain json, the field rules of the tools written out
# again. Prints {"cells": [[model, item, score], ...], "text": {item: text},
# "group": {item: category}} for the folder in argv[1].
import glob, json, os, sys, zipfile

root = sys.argv[1]
cells, text, group = [], {}, {}

def add(model, item, score, t, g):
    cells.append([model, item, score])
    text.setdefault(item, t)
    group.setdefault(item, g)

# lm-eval: results_TS.json beside samples_TASK_TS.jsonl
for rp in sorted(glob.glob(os.path.join(root, "**", "results_*.json"), recursive=True)):
    res = json.load(open(rp))
    ts = os.path.basename(rp)[len("results_"):-len(".json")]
    model = res.get("model_name") or res["config"].get("model_name") or [
        kv.split("=", 1)[1] for kv in res["config"]["model_args"].split(",") if kv.startswith("pretrained=")][0]
    for task, cfg in res["configs"].items():
        sp = os.path.join(os.path.dirname(rp), "samples_%s_%s.jsonl" % (task, ts))
        if not os.path.exists(sp):
            continue
        for line in open(sp):
            s = json.loads(line)
            metric = s["metrics"][0] if "metrics" in s else cfg["metric_list"][0]["metric"]
            add(model, "%s/%s" % (task, s["doc_id"]), float(s[metric]), s["arguments"]["gen_args_0"]["arg_0"], task)

# HELM: run folders
for ps in sorted(glob.glob(os.path.join(root, "**", "per_instance_stats.json"), recursive=True)):
    d = os.path.dirname(ps)
    spec = json.load(open(os.path.join(d, "run_spec.json")))
    scen, _, args = spec["name"].partition(":")
    keep = [a for a in args.split(",") if a and not a.startswith("model=") and not a.startswith("model_deployment=")]
    task = scen + (":" + ",".join(keep) if keep else "")
    cat = json.load(open(os.path.join(d, "scenario.json")))["name"]
    sargs = spec["scenario_spec"].get("args", {})
    if sargs:
        cat += ":" + ",".join("%s=%s" % (k, sargs[k]) for k in sorted(sargs))
    metric = [n for m in spec["metric_specs"] for n in m["args"].get("names", [])][0]
    texts = {}
    for rs in json.load(open(os.path.join(d, "scenario_state.json")))["request_states"]:
        texts.setdefault(rs["instance"]["id"], rs["instance"]["input"]["text"])
    for inst in json.load(open(ps)):
        st = [s for s in inst["stats"] if s["name"]["name"] == metric and not s["name"].get("perturbation")][0]
        add(spec["adapter_spec"]["model"], task + "/" + inst["instance_id"], float(st["mean"]), texts[inst["instance_id"]], cat)

# inspect: .json logs with samples
for lp in sorted(glob.glob(os.path.join(root, "**", "*.json"), recursive=True)):
    log = json.load(open(lp))
    if not isinstance(log, dict) or "eval" not in log or "samples" not in log:
        continue
    scorer = log["eval"]["scorers"][0]["name"]
    for s in log["samples"]:
        if scorer not in s.get("scores", {}):
            continue
        v = s["scores"][scorer]["value"]
        v = {"C": 1.0, "I": 0.0}.get(v, v)
        inp = s["input"] if isinstance(s["input"], str) else "\n\n".join(m["content"] for m in s["input"] if m["role"] == "user")
        add(log["eval"]["model"], "%s/%s" % (log["eval"]["task"], s["id"]), float(v), inp, log["eval"]["task"])

# Every Eval Ever: *_samples.jsonl
for sp in sorted(glob.glob(os.path.join(root, "**", "*_samples.jsonl"), recursive=True)):
    for line in open(sp):
        s = json.loads(line)
        e = s["evaluation"]
        v = e["is_correct"] if e.get("is_correct") is not None else e["score"]
        add(s["model_id"], "%s/%s" % (s["evaluation_name"], s["sample_id"]), float(v), s["input"]["raw"], s["evaluation_name"])

json.dump({"cells": cells, "text": text, "group": group}, sys.stdout)
