package routerun

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/routefile"
	"github.com/jeirt/jeirt/train/jeirt"
	"github.com/jeirt/jeirt/train/route"
)

// Run is jeirt route: it routes every query of a queries file with a
// checkpoint and prints the choices. The zero value needs Checkpoint.
type Run struct {
	Checkpoint string // checkpoint folder
	Encoder    string // encoder override ("": the recorded one)
	Router     RouterOptions
	Print      string // table (default), csv or json (JSON lines)
	Top        int    // alternatives listed per query
	Log        progress.Logf
}

// Route reads the queries from in (name "-": standard input, else the
// file), routes them and writes the choices to w; notes and the summary go
// to Log.
func (o Run) Route(ctx context.Context, name string, in io.Reader, w io.Writer) error {
	if o.Print == "" {
		o.Print = "table"
	}
	if o.Print != "table" && o.Print != "csv" && o.Print != "json" {
		return model.FieldErrorf("Print", "route: {Print} %q: want table, csv or json", o.Print)
	}
	if o.Top < 0 {
		return model.FieldErrorf("Top", "route: {Top} %d must not be negative", o.Top)
	}
	log := o.Log
	start := time.Now()
	ck, err := checkpoint.Open(o.Checkpoint, o.Encoder, log)
	if err != nil {
		return err
	}
	rt, note, err := NewRouter(ck, o.Router)
	if err != nil {
		return err
	}
	log.Printf("route: rule %s: %s", note.Rule, note.Why)
	enc, err := jeirt.OpenCheckpointEncoder(ck)
	if err != nil {
		return err
	}
	loaded := time.Now()
	if name == "-" {
		name = "stdin"
	} else {
		f, err := fileio.OpenInput(name)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	qf, err := routefile.ReadQueries(name, in)
	if err != nil {
		return err
	}
	if blank := qf.Blank(); len(blank) > 0 {
		log.Printf("route: skipped %s in %s (%s)", plural(len(blank), "empty line", "empty lines"), name, lineList(blank, 10))
	}
	if len(qf.EmptyText) > 0 {
		log.Printf("route: skipped %s in %s (%s)", plural(len(qf.EmptyText), "JSON line with empty text", "JSON lines with empty text"), name, lineList(qf.EmptyText, 10))
	}
	if len(qf.Queries) == 0 {
		return fmt.Errorf("route: %s has no queries", name)
	}
	ids, texts := make([]string, len(qf.Queries)), make([]string, len(qf.Queries))
	for k, q := range qf.Queries {
		ids[k], texts[k] = q.ID, q.Text
	}
	emb, x, err := jeirt.EncodeQuestions(ctx, ck, enc, ids, texts)
	if err != nil {
		return fmt.Errorf("route: %w", err)
	}
	choices := make([]route.Choice, len(emb))
	fallbacks, ood := 0, 0
	for k := range emb {
		choices[k] = rt.RouteChecked(emb[k], x[k])
		for _, mp := range choices[k].Ranked { // the embeddings are checked; this is the last guard
			if !model.Finite(mp.P) {
				return fmt.Errorf("route: %s: P(correct) of model %q for query %q is %v", ck.Where(), ck.Model.Models[mp.Model], ids[k], mp.P)
			}
		}
		if choices[k].Fallback {
			fallbacks++
		}
		if choices[k].OutOfDomain {
			ood++
		}
	}
	if err := WriteChoices(w, o.Print, ck.Model, rt, qf.Queries, choices, o.Top); err != nil {
		return err
	}
	if fallbacks > 0 {
		log.Printf("route: %d of %d queries had no model with P >= %g; each went to its highest-P model instead", fallbacks, len(choices), rt.MinP)
	}
	switch {
	case rt.Domain == nil:
		log.Printf("route: the checkpoint keeps no out-of-domain reference (written by an older jeirt): queries are not checked")
	case ood > 0 && rt.KeepOutOfDomain:
		log.Printf("route: %d of %d queries are out of domain (%s); the rule's choice is kept", ood, len(choices), DomainNote(rt.Domain))
	case ood > 0:
		log.Printf("route: %d of %d queries are out of domain (%s); sent to the rule's fallback, the best single model %s (--keep-out-of-domain keeps the rule's choice)", ood, len(choices), DomainNote(rt.Domain), ck.Model.Models[rt.Best])
	}
	log.Printf("route: %d queries, %d models, rule %s; load %.1f ms, encode+route %.2f ms",
		len(choices), len(rt.Candidates), note.Rule, ms(loaded.Sub(start)), ms(time.Since(loaded)))
	return nil
}

// DomainNote says what the out-of-domain check's threshold means.
func DomainNote(d *checkpoint.Domain) string {
	if d.Calibration == 0 { // a file written before the threshold was calibrated
		return fmt.Sprintf("farther from every training question than %.0f%% of training questions are from their nearest neighbour", 100*(1-d.FalseFlagRate))
	}
	return fmt.Sprintf("cosine distance to the nearest training question above %.4f, the threshold that flags %.0f%% of %d held-out training questions", d.Threshold, 100*d.FalseFlagRate, d.Calibration)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// lineList renders up to limit line numbers: "lines 3, 7 and 12 more".
func lineList(lines []int, limit int) string {
	var b strings.Builder
	b.WriteString(map[bool]string{true: "line ", false: "lines "}[len(lines) == 1])
	for k, l := range lines {
		if k == limit {
			fmt.Fprintf(&b, " and %d more", len(lines)-limit)
			break
		}
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(l))
	}
	return b.String()
}
