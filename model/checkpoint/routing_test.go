package checkpoint

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func testRouting() *Routing {
	three, half := 3.0, 0.25
	return &Routing{Rule: "shortlist", Param: &three, Why: "shortlist?k=3 beat best-single by 2.0 ± 0.9 points",
		Fallback: "llama", TrainAccuracy: map[string]float64{"gpt": 0.4, "llama": 0.6},
		CV: &RoutingCV{Folds: 5, Completed: 5, Questions: 350, Seed: 42, Refit: "best-epoch",
			Rules: []RuleScore{{Rule: "best-single", Accuracy: 0.77, AccuracySE: 0.02},
				{Rule: "shortlist", Param: &three, Accuracy: 0.79, AccuracySE: 0.021, VsBestSingle: 0.02, VsBestSingleSE: 0.009, Wins: 4, Losses: 0, MeanCost: &half}}},
		OutOfDomain: &OutOfDomain{FalseFlagRate: 0.05, Threshold: 0.3125, Calibration: 350, Reference: 350},
		Calibration: &Calibration{JEIRT: 0.4137, Accuracy: 0.8821, Intercept: -0.0625, Cells: 46900, LogLoss: 0.4211, RawLogLoss: 0.5873}}
}

// The recorded rule, its figures and the out-of-domain threshold come back
// exactly from a written checkpoint, its domain file agrees, and they are
// part of the identity the weights name: editing the rule in manifest.json
// is refused.
func TestRoutingRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	rng := rand.New(rand.NewPCG(1, 2))
	dom, err := NewDomain(topicVectors(40, 3, 0.1, rng), 3, nil, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	domBytes, err := dom.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	rt := testRouting()
	rt.OutOfDomain = &OutOfDomain{FalseFlagRate: dom.FalseFlagRate, Threshold: dom.Threshold, Calibration: dom.Calibration, Reference: dom.NumReference()}
	c := &Checkpoint{Model: smallJEIRT(), Manifest: Manifest{Routing: rt}, Files: map[string][]byte{DomainFile: domBytes}}
	if err := c.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Manifest.Routing, rt) {
		t.Errorf("routing changed:\n got %+v\nwant %+v", got.Manifest.Routing, rt)
	}
	gd, err := LoadDomain(dir)
	if err != nil {
		t.Fatal(err)
	}
	if o := got.Manifest.Routing.OutOfDomain; gd.Threshold != o.Threshold || gd.FalseFlagRate != o.FalseFlagRate || gd.Calibration != o.Calibration || o.Calibration != 40 {
		t.Errorf("domain file %+v, manifest %+v", gd, o)
	}
	man := filepath.Join(dir, ManifestFile)
	raw, _ := os.ReadFile(man)
	// A rule edited to one without a parameter: route.Recorded refuses it
	// (train/route's TestRecorded).
	os.WriteFile(man, bytes.Replace(raw, []byte(`"param": 3,`), []byte(`"param": 5,`), 1), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "hashes to") {
		t.Errorf("shortlist edited from 3 to 5: %v", err)
	}
	// A checkpoint without routing keeps the identity it had before the
	// block existed.
	plain := &Manifest{Models: []string{"a"}}
	before := plain.IdentitySHA256()
	plain.Routing = nil
	if plain.IdentitySHA256() != before {
		t.Error("a nil routing changed the identity")
	}
}

func TestRoutingCheck(t *testing.T) {
	models := []string{"gpt", "llama"}
	if err := testRouting().Check(models); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*Routing)
		want string
	}{
		// The rule and its parameter are route.Recorded's (train/route's TestRecorded).
		{func(r *Routing) { r.Rule = "" }, "routing.rule: missing"},
		{func(r *Routing) { r.Fallback = "claude" }, `routing.fallback "claude"`},
		{func(r *Routing) { r.TrainAccuracy["claude"] = 0.5 }, `"claude" is not a model`},
		{func(r *Routing) { r.OutOfDomain.FalseFlagRate = 0 }, "routing.out_of_domain"},
		{func(r *Routing) { r.Calibration.Accuracy = math.Inf(1) }, "routing.calibration"},
		{func(r *Routing) { r.Calibration.LogLoss = math.NaN() }, "routing.calibration"},
	} {
		r := testRouting()
		c.edit(r)
		if err := r.Check(models); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
}
