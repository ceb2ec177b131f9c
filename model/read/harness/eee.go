package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jeirt/jeirt/model/read/harness/internal/jsonscan"
)

// Every Eval Ever: an instance-level file UUID_samples.jsonl, beside its
// aggregate UUID.json in a datastore tree (data/BENCHMARK/DEVELOPER/MODEL/),
// holds one JSON object per sample: model_id, evaluation_name, sample_id,
// input.raw, evaluation.is_correct and evaluation.score.

// eeeLog is one (model, evaluation) of a samples file.
type eeeLog struct {
	log    *Log
	model  *logModel
	metric string
	miss   missing
	total  int
}

// eeeSamples reads a samples file.
func (c *collector) eeeSamples(p string) error {
	c.eeeRead[p] = true
	logs := map[[2]string]*eeeLog{}
	var order [][2]string
	err := eachLine(p, func(b []byte, n int) error {
		var modelID, name, sid, input, eval []byte
		if err := jsonscan.EachField(b, func(k, v []byte) bool {
			switch string(k) {
			case "model_id":
				modelID = v
			case "evaluation_name":
				name = v
			case "sample_id":
				sid = v
			case "input":
				input = v
			case "evaluation":
				eval = v
			}
			return true
		}); err != nil {
			return lineError(p, n, "", "%v", err)
		}
		mname, ok := jsonscan.Str(modelID)
		if !ok || mname == "" {
			return lineError(p, n, "model_id", "want the model's name")
		}
		task, ok := jsonscan.Str(name)
		if !ok || task == "" {
			return lineError(p, n, "evaluation_name", "want the evaluation's name")
		}
		id := jsonscan.ID(sid)
		if id == "" {
			return lineError(p, n, "sample_id", "want a string or integer sample id")
		}
		key := [2]string{mname, task}
		l := logs[key]
		if l == nil {
			l = &eeeLog{log: &Log{Path: p, Tool: EEE, Model: mname, Task: task}, model: c.model(mname)}
			logs[key] = l
			order = append(order, key)
		}
		l.total++
		if l.metric == "" {
			var err error
			if l.metric, err = c.eeeMetric(eval); err != nil {
				return lineError(p, n, "evaluation", "%v", err)
			}
			l.log.Metric = l.metric
		}
		var v []byte
		if len(eval) > 0 && eval[0] == '{' {
			var err error
			if v, err = jsonscan.Field(eval, l.metric); err != nil {
				return lineError(p, n, "evaluation", "%v", err)
			}
		}
		if v == nil || string(v) == "null" {
			l.miss.add(id)
			return nil
		}
		x, ok := jsonscan.Number(v)
		if why := notNumber(v); !ok && why != "" {
			return lineError(p, n, "evaluation."+l.metric, "%s", why)
		}
		if !ok {
			return lineError(p, n, "evaluation."+l.metric, "%s is not a score", clipRaw(v))
		}
		if err := checkScore(x, l.metric); err != nil {
			return lineError(p, n, "evaluation."+l.metric, "%v", err)
		}
		i, need := c.item(EEE, task, id, task)
		if need {
			raw, _ := jsonscan.Field(input, "raw")
			if len(input) > 0 && input[0] == '{' {
				s, _ := jsonscan.Str(raw)
				c.setText(i, s)
			}
		}
		c.score(l.model, i, x, n)
		l.log.Samples++
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range order {
		l := logs[k]
		if err := l.miss.err(p, k[1], l.metric, "sample_id", l.total); err != nil {
			return err
		}
		if l.log.Samples > 0 {
			c.sum.Logs = append(c.sum.Logs, *l.log)
		}
	}
	if len(order) == 0 {
		c.skip(p, "an Every Eval Ever samples file with no samples")
	}
	return nil
}

// eeeMetric picks the evaluation key: the first of --metric present, else
// is_correct when present, else score.
func (c *collector) eeeMetric(eval []byte) (string, error) {
	var have []string
	if len(eval) > 0 && eval[0] == '{' {
		jsonscan.EachField(eval, func(k, v []byte) bool {
			if string(v) != "null" {
				have = append(have, string(k))
			}
			return true
		})
	}
	for _, want := range c.opt.Metric {
		if slices.Contains(have, want) {
			return want, nil
		}
	}
	if len(c.opt.Metric) > 0 {
		return "", fmt.Errorf("none of --metric %s (the evaluation has %s)", strings.Join(c.opt.Metric, ","), strings.Join(have, ", "))
	}
	for _, k := range []string{"is_correct", "score"} {
		if slices.Contains(have, k) {
			return k, nil
		}
	}
	return "", fmt.Errorf("neither is_correct nor score (it has %s)", strings.Join(have, ", "))
}
