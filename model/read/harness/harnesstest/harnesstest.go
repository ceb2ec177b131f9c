// Package harnesstest writes evaluation-tool logs of given responses, in
// the schemas of lm-evaluation-harness, HELM, inspect_ai and Every Eval
// Ever, for tests of the readers (and the small tree configs/data ships).
// Each writer carries only the fields the readers use, named as the tools
// name them (see Write).
package harnesstest

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Set is one task's responses: Scores[m][j] lists the trial scores of
// model Models[m] on item Items[j] (each 0, 1 or a graded score in
// [0, 1]; none: not answered).
type Set struct {
	Task   string
	Models []string
	Items  []Item
	Scores [][][]float64
}

// Item is an item's id within its task and its text.
type Item struct{ ID, Text string }

// Write writes s in tool's schema (lm-eval, helm, inspect or eee) under dir:
//
//   - lm-eval: MODEL/results_TS.json (model_name; configs.TASK.metric_list
//     [{metric: acc}], num_fewshot 0; a second task written to the same
//     folder joins the run's results file) beside MODEL/samples_TASK_TS.jsonl
//     (doc_id, doc.question, arguments.gen_args_0.arg_0, filter none,
//     metrics [acc], acc); trial t is the run of timestamp t.
//   - helm: TASK:model=MODEL/ with run_spec.json (name, scenario_spec.args,
//     adapter_spec.model, metric_specs[].args.names [exact_match]),
//     scenario.json (name), per_instance_stats.json (instance_id,
//     train_trial_index t, stats [{name {name exact_match, split test},
//     count, sum, mean}]) and scenario_state.json (request_states
//     [{instance {id, input.text}, train_trial_index}]).
//   - inspect: one log per model, a .json log ({version 2, status, eval
//     {task, model, scorers [{name match}]}, samples [{id, epoch t+1,
//     input, scores {match {value}}}]}: C, I, or the number; each sample
//     also carries target, messages, output and events, as real logs do) for
//     even models and a .eval zip (header.json and samples/ID_epoch_E.json)
//     for odd ones.
//   - eee: data/TASK/DEV/NAME/UUID_samples.jsonl (model_id, evaluation_name,
//     sample_id, input.raw, evaluation.score), one line a trial.
func Write(dir, tool string, s Set) error {
	switch tool {
	case "lm-eval":
		return writeLMEval(dir, s)
	case "helm":
		return writeHELM(dir, s)
	case "inspect":
		return writeInspect(dir, s)
	case "eee":
		return writeEEE(dir, s)
	}
	return fmt.Errorf("unknown tool %q", tool)
}

func safe(name string) string { return strings.NewReplacer("/", "_", ":", "_").Replace(name) }

func maxTrials(s Set, m int) int {
	n := 0
	for _, t := range s.Scores[m] {
		n = max(n, len(t))
	}
	return n
}

func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func writeLines(path string, lines []any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var b strings.Builder
	for _, l := range lines {
		j, err := json.Marshal(l)
		if err != nil {
			return err
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

type obj = map[string]any

func writeLMEval(dir string, s Set) error {
	for m, name := range s.Models {
		for t := 0; t < maxTrials(s, m); t++ {
			ts := fmt.Sprintf("2026-01-0%dT00-00-00.000000", t+1)
			d := filepath.Join(dir, safe(name))
			res := obj{"results": obj{}, "group_subtasks": obj{}, "configs": obj{},
				"config": obj{"model": "hf", "model_args": "pretrained=" + name}, "model_name": name}
			// Several tasks of one run share its results file.
			rp := filepath.Join(d, "results_"+ts+".json")
			if b, err := os.ReadFile(rp); err == nil {
				if err := json.Unmarshal(b, &res); err != nil {
					return err
				}
			}
			res["results"].(obj)[s.Task] = obj{"alias": s.Task}
			res["group_subtasks"].(obj)[s.Task] = []string{}
			res["configs"].(obj)[s.Task] = obj{"task": s.Task, "metric_list": []obj{{"metric": "acc"}}, "num_fewshot": 0}
			if err := writeJSON(rp, res); err != nil {
				return err
			}
			var lines []any
			for j, it := range s.Items {
				if t >= len(s.Scores[m][j]) {
					continue
				}
				lines = append(lines, obj{"doc_id": j, "doc": obj{"question": it.Text, "id": it.ID},
					"arguments": obj{"gen_args_0": obj{"arg_0": it.Text, "arg_1": " A"}},
					"filter":    "none", "metrics": []string{"acc"}, "acc": s.Scores[m][j][t]})
			}
			if err := writeLines(filepath.Join(d, "samples_"+s.Task+"_"+ts+".jsonl"), lines); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeHELM(dir string, s Set) error {
	for m, name := range s.Models {
		run := s.Task + ":model=" + safe(name)
		d := filepath.Join(dir, run)
		spec := obj{"name": run, "scenario_spec": obj{"class_name": "x", "args": obj{}}, "adapter_spec": obj{"model": name},
			"metric_specs": []obj{{"class_name": "BasicGenerationMetric", "args": obj{"names": []string{"exact_match"}}}}}
		if err := writeJSON(filepath.Join(d, "run_spec.json"), spec); err != nil {
			return err
		}
		if err := writeJSON(filepath.Join(d, "scenario.json"), obj{"name": s.Task}); err != nil {
			return err
		}
		var stats, states []obj
		for t := 0; t < maxTrials(s, m); t++ {
			for j, it := range s.Items {
				if t >= len(s.Scores[m][j]) {
					continue
				}
				x := s.Scores[m][j][t]
				id := fmt.Sprint(j)
				stats = append(stats, obj{"instance_id": id, "train_trial_index": t, "stats": []obj{
					{"name": obj{"name": "num_references", "split": "test"}, "count": 1, "sum": 4, "mean": 4},
					{"name": obj{"name": "exact_match", "split": "test"}, "count": 1, "sum": x, "mean": x}}})
				states = append(states, obj{"instance": obj{"input": obj{"text": it.Text}, "split": "test", "id": id}, "train_trial_index": t})
			}
		}
		if err := writeJSON(filepath.Join(d, "per_instance_stats.json"), stats); err != nil {
			return err
		}
		if err := writeJSON(filepath.Join(d, "scenario_state.json"), obj{"adapter_spec": obj{"model": name}, "request_states": states}); err != nil {
			return err
		}
	}
	return nil
}

func inspectValue(x float64) any {
	switch x {
	case 1:
		return "C"
	case 0:
		return "I"
	}
	return x
}

func writeInspect(dir string, s Set) error {
	for m, name := range s.Models {
		head := obj{"version": 2, "status": "success", "eval": obj{"task": s.Task, "model": name, "scorers": []obj{{"name": "match"}}}}
		var samples []obj
		for t := 0; t < maxTrials(s, m); t++ {
			for j, it := range s.Items {
				if t >= len(s.Scores[m][j]) {
					continue
				}
				input := any(it.Text)
				if j%2 == 1 {
					input = []obj{{"role": "system", "content": "Answer."}, {"role": "user", "content": it.Text}}
				}
				// The messages, output and events a real log carries beside
				// the score (the readers pass over them).
				answer := fmt.Sprintf("ANSWER: %v", s.Scores[m][j][t])
				messages := []obj{{"role": "user", "content": it.Text, "source": "input"}, {"role": "assistant", "content": answer}}
				samples = append(samples, obj{"id": j, "epoch": t + 1, "input": input, "target": "A",
					"messages": messages,
					"output":   obj{"model": name, "choices": []obj{{"message": messages[1], "stop_reason": "stop"}}, "completion": answer},
					"scores":   obj{"match": obj{"value": inspectValue(s.Scores[m][j][t]), "answer": answer, "explanation": it.Text}},
					"events": []obj{{"event": "sample_init", "sample": obj{"input": it.Text}},
						{"event": "model", "model": name, "input": messages[:1], "output": obj{"completion": answer}},
						{"event": "score", "score": obj{"value": inspectValue(s.Scores[m][j][t]), "explanation": it.Text}}}})
			}
		}
		base := filepath.Join(dir, fmt.Sprintf("%02d_%s_%s", m, safe(s.Task), safe(name)))
		if m%2 == 0 {
			head["samples"] = samples
			if err := writeJSON(base+".json", head); err != nil {
				return err
			}
			continue
		}
		if err := writeZip(base+".eval", head, samples); err != nil {
			return err
		}
	}
	return nil
}

func writeZip(path string, head obj, samples []obj) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	add := func(name string, v any) error {
		w, err := zw.Create(name)
		if err != nil {
			return err
		}
		return json.NewEncoder(w).Encode(v)
	}
	if err := add("_journal/start.json", head); err != nil {
		return err
	}
	for _, smp := range samples {
		if err := add(fmt.Sprintf("samples/%v_epoch_%v.json", smp["id"], smp["epoch"]), smp); err != nil {
			return err
		}
	}
	if err := add("header.json", head); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

func writeEEE(dir string, s Set) error {
	for m, name := range s.Models {
		dev, model, ok := strings.Cut(name, "/")
		if !ok {
			dev, model = "unknown", name
		}
		var lines []any
		for t := 0; t < maxTrials(s, m); t++ {
			for j, it := range s.Items {
				if t >= len(s.Scores[m][j]) {
					continue
				}
				lines = append(lines, obj{"schema_version": "0.3.0", "model_id": name, "evaluation_name": s.Task,
					"sample_id": fmt.Sprint(j), "input": obj{"raw": it.Text}, "evaluation": obj{"score": s.Scores[m][j][t]}})
			}
		}
		p := filepath.Join(dir, "data", s.Task, safe(dev), safe(model), fmt.Sprintf("0000%04d-0000-4000-8000-000000000000_samples.jsonl", m))
		if err := writeLines(p, lines); err != nil {
			return err
		}
	}
	return nil
}

// LongCSV renders s as the long CSV the readers read with --graded: one
// row a cell, model,item,successes,trials,category (the task, as each log
// gives it), models sorted and each model's items sorted by id, item ids
// TASK/J: the order in which the log readers give them.
func LongCSV(s Set) string {
	type row struct {
		m, item string
		k       float64
		n       int
	}
	var rows []row
	for m, name := range s.Models {
		for j := range s.Items {
			sc := s.Scores[m][j]
			k := 0.0
			for _, x := range sc {
				k += x
			}
			rows = append(rows, row{name, fmt.Sprintf("%s/%d", s.Task, j), k, len(sc)})
		}
	}
	sortRows := func(a, b row) int {
		if c := strings.Compare(a.m, b.m); c != 0 {
			return c
		}
		return strings.Compare(a.item, b.item)
	}
	for i := 1; i < len(rows); i++ {
		for k := i; k > 0 && sortRows(rows[k-1], rows[k]) > 0; k-- {
			rows[k-1], rows[k] = rows[k], rows[k-1]
		}
	}
	var b strings.Builder
	b.WriteString("model,item,successes,trials,category\n")
	for _, r := range rows {
		if r.n == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s,%s,%v,%d,%s\n", r.m, r.item, r.k, r.n, s.Task)
	}
	return b.String()
}
