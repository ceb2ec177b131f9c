package serve

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/train/onboard"
	"github.com/jeirt/jeirt/train/route"
)

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	st := s.cur.Load()
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "checkpoint": st.dir,
		"models": st.model().NumModels(), "loaded": st.loaded.UTC().Format(time.RFC3339)})
	return nil
}

// Query is one question to route.
type Query struct {
	ID   string `json:"id,omitempty"`
	Text string `json:"text"`
}

// RouteRequest is the body of POST /v1/route: one query (Text, with an
// optional ID) or a batch (Queries), and the routing settings.
type RouteRequest struct {
	ID      string  `json:"id,omitempty"`
	Text    string  `json:"text,omitempty"`
	Queries []Query `json:"queries,omitempty"`
	Top     *int    `json:"top,omitempty"`
	RouteParams
}

// Candidate is one model's predicted probability of a correct answer.
type Candidate struct {
	Model string   `json:"model"`
	P     float64  `json:"p"`
	Cost  *float64 `json:"cost,omitempty"`
}

// Routed is the decision for one query. Rule is the rule that chose, as
// route.ParseRule reads it (shortlist?k=3, margin?delta=0.05&default=mid),
// and Reason why. OutOfDomain is true when the query is unlike every
// training question of the checkpoint (model.Domain); it is then sent to
// the best-ranked candidate (rule "out-of-domain") unless the request says
// keep_out_of_domain. Upstream and UpstreamModel are where a chat with the
// same text and rule would be sent (absent without upstreams).
type Routed struct {
	ID string `json:"id"`
	Candidate
	Rule          string      `json:"rule"`
	Reason        string      `json:"reason"`
	Upstream      string      `json:"upstream,omitempty"`
	UpstreamModel string      `json:"upstream_model,omitempty"`
	Fallback      bool        `json:"fallback,omitempty"`
	OutOfDomain   bool        `json:"out_of_domain"`
	Alternatives  []Candidate `json:"alternatives"`
}

// RouteResponse answers a batch.
type RouteResponse struct {
	Results []Routed `json:"results"`
}

func (s *Server) candidate(st *state, mp route.ModelP) Candidate {
	c := Candidate{Model: st.model().Models[mp.Model], P: mp.P}
	if v := st.cost(mp.Model); !math.IsNaN(v) {
		c.Cost = &v
	}
	return c
}

// decide routes the queries by p among the models a chat can be sent to
// (with upstreams, those that have one): POST /v1/route and a chat with
// "model": "router..." both decide here, so the preview is the call.
func (s *Server) decide(r *http.Request, st *state, p RouteParams, qs []Query, top int) ([]Routed, error) {
	var allowed func(string) bool
	if len(s.upstreams) > 0 {
		allowed = s.hasUpstream
	}
	rt, err := st.Router(p, allowed)
	if err != nil {
		return nil, err
	}
	return s.routeTexts(r, st, rt, qs, top)
}

// routeTexts embeds the queries and routes each with rt.
func (s *Server) routeTexts(r *http.Request, st *state, rt *route.Router, qs []Query, top int) ([]Routed, error) {
	ids, texts := make([]string, len(qs)), make([]string, len(qs))
	for k, q := range qs {
		ids[k], texts[k] = q.ID, q.Text
	}
	emb, x, err := st.embed(r.Context(), ids, texts)
	if err != nil {
		return nil, err
	}
	out := make([]Routed, len(qs))
	for k := range qs {
		ch := rt.RouteChecked(emb[k], x[k])
		for _, mp := range ch.Ranked {
			if err := finiteP(st, mp, qs[k].ID); err != nil {
				return nil, err
			}
		}
		alts := []Candidate{}
		for _, a := range ch.Alternatives(top) {
			alts = append(alts, s.candidate(st, a))
		}
		out[k] = Routed{ID: qs[k].ID, Candidate: s.candidate(st, ch.ModelP), Rule: ch.Rule, Reason: ch.Reason, Fallback: ch.Fallback, OutOfDomain: ch.OutOfDomain, Alternatives: alts}
		if up, ok := s.upstreams[out[k].Model]; ok {
			out[k].Upstream, out[k].UpstreamModel = up.URL(), up.Model
		}
		// The rule's name, not its spec: a label takes few values.
		name, _, _ := strings.Cut(ch.Rule, "?")
		s.metrics.routed.WithLabelValues(out[k].Model, name).Inc()
		if ch.OutOfDomain {
			s.metrics.outOfDomain.Inc()
		}
	}
	return out, nil
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) error {
	var req RouteRequest
	if err := decodeJSON(w, r, s.set.MaxBody, &req); err != nil {
		return err
	}
	single := req.Queries == nil
	qs := req.Queries
	if single {
		if strings.TrimSpace(req.Text) == "" {
			return badField("text", "empty text: send a query in text, or a batch in queries")
		}
		qs = []Query{{ID: req.ID, Text: req.Text}}
	} else {
		if req.Text != "" || req.ID != "" {
			return badField("text", "give one query in text or a batch in queries, not both")
		}
		if len(qs) == 0 {
			return badField("queries", "empty batch")
		}
		if len(qs) > s.set.MaxBatch {
			return badField("queries", "%d queries; at most %d per request", len(qs), s.set.MaxBatch)
		}
		for k := range qs {
			if strings.TrimSpace(qs[k].Text) == "" {
				return badField(fmt.Sprintf("queries[%d].text", k), "empty text")
			}
			if qs[k].ID == "" {
				qs[k].ID = strconv.Itoa(k + 1)
			}
		}
	}
	top := s.set.Top
	if req.Top != nil {
		if *req.Top < 0 {
			return badField("top", "top %d must not be negative", *req.Top)
		}
		top = *req.Top
	}
	res, err := s.decide(r, s.cur.Load(), req.RouteParams, qs, top)
	if err != nil {
		return err
	}
	if single {
		writeJSON(w, http.StatusOK, res[0])
	} else {
		writeJSON(w, http.StatusOK, RouteResponse{Results: res})
	}
	return nil
}

// PredictRequest is the body of POST /v1/predict.
type PredictRequest struct {
	Pairs []Pair `json:"pairs"`
}

// Pair is a (model, question text) pair.
type Pair struct {
	Model string `json:"model"`
	Text  string `json:"text"`
}

// Prediction is P(correct) of a pair.
type Prediction struct {
	Model string  `json:"model"`
	P     float64 `json:"p"`
}

func (s *Server) predict(w http.ResponseWriter, r *http.Request) error {
	var req PredictRequest
	if err := decodeJSON(w, r, s.set.MaxBody, &req); err != nil {
		return err
	}
	if len(req.Pairs) == 0 {
		return badField("pairs", "no (model, text) pairs")
	}
	if len(req.Pairs) > s.set.MaxBatch {
		return badField("pairs", "%d pairs; at most %d per request", len(req.Pairs), s.set.MaxBatch)
	}
	st := s.cur.Load()
	rows := make([]int, len(req.Pairs))
	ids, texts := make([]string, len(req.Pairs)), make([]string, len(req.Pairs))
	for k, p := range req.Pairs {
		i, ok := st.index[p.Model]
		if !ok {
			return badField(fmt.Sprintf("pairs[%d].model", k), "%q is not a model of the checkpoint", p.Model)
		}
		if strings.TrimSpace(p.Text) == "" {
			return badField(fmt.Sprintf("pairs[%d].text", k), "empty text")
		}
		rows[k], ids[k], texts[k] = i, strconv.Itoa(k+1), p.Text
	}
	emb, _, err := st.embed(r.Context(), ids, texts)
	if err != nil {
		return err
	}
	out := make([]Prediction, len(req.Pairs))
	for k, p := range req.Pairs {
		out[k] = Prediction{Model: p.Model, P: st.model().Prob(rows[k], emb[k])}
		if err := finiteP(st, route.ModelP{Model: rows[k], P: out[k].P}, ids[k]); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, map[string][]Prediction{"predictions": out})
	return nil
}

// ModelInfo is one model of GET /v1/jeirt/models. MeanP is the model's
// mean predicted P(correct) over the checkpoint's questions: the checkpoint
// does not keep the training responses, so this stands for its overall
// accuracy.
type ModelInfo struct {
	Name     string   `json:"name"`
	Cost     *float64 `json:"cost,omitempty"`
	MeanP    float64  `json:"mean_p"`
	Upstream string   `json:"upstream,omitempty"`
}

// jeirtModels is GET /v1/jeirt/models: the checkpoint's models with their
// cost, mean predicted P and upstream, and the router's model names.
func (s *Server) jeirtModels(w http.ResponseWriter, r *http.Request) error {
	st := s.cur.Load()
	out := make([]ModelInfo, st.model().NumModels())
	for i, name := range st.model().Models {
		out[i] = ModelInfo{Name: name, MeanP: st.ref[i]}
		if c := st.cost(i); !math.IsNaN(c) {
			out[i].Cost = &c
		}
		if u, ok := s.upstreams[name]; ok {
			out[i].Upstream = s.mask().URL(u.BaseURL)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"checkpoint": st.dir, "items": st.model().NumItems(), "models": out, "router": st.routerIDs()})
	return nil
}

// OpenAIModel is one entry of GET /v1/models, in the shape of OpenAI's
// model list.
type OpenAIModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "model"
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// openAIModels are the model names a chat request can give: the router's
// (plain "router" and each rule, owned by jeirt) and each model of the
// upstreams file (owned by its upstream's host), checkpoint models first in
// the checkpoint's order. Created is when the checkpoint was loaded.
func (s *Server) openAIModels(st *state) []OpenAIModel {
	created := st.loaded.Unix()
	var out []OpenAIModel
	for _, id := range st.routerIDs() {
		out = append(out, OpenAIModel{ID: id, Object: "model", Created: created, OwnedBy: "jeirt"})
	}
	add := func(name string) {
		u := s.upstreams[name]
		owner := "upstream"
		if pu, err := url.Parse(u.URL()); err == nil && pu.Host != "" {
			owner = pu.Host
		}
		out = append(out, OpenAIModel{ID: name, Object: "model", Created: created, OwnedBy: owner})
	}
	for _, name := range st.model().Models {
		if s.hasUpstream(name) {
			add(name)
		}
	}
	var rest []string
	for name := range s.upstreams {
		if _, known := st.index[name]; !known {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	for _, name := range rest {
		add(name)
	}
	return out
}

// models is GET /v1/models, OpenAI's list: {"object": "list", "data": [...]}.
func (s *Server) models(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, struct {
		Object string        `json:"object"`
		Data   []OpenAIModel `json:"data"`
	}{"list", s.openAIModels(s.cur.Load())})
	return nil
}

// modelByID is GET /v1/models/{id}, OpenAI's retrieve.
func (s *Server) modelByID(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	for _, m := range s.openAIModels(s.cur.Load()) {
		if m.ID == id {
			writeJSON(w, http.StatusOK, m)
			return nil
		}
	}
	return &requestError{Status: http.StatusNotFound, Field: "model", Code: "model_not_found", Msg: fmt.Sprintf("no model %q (GET /v1/models lists them)", id)}
}

// OnboardRequest is the body of POST /v1/models: a new model's answers to
// questions (known to the checkpoint by id, or new ones with their text).
type OnboardRequest struct {
	Name    string   `json:"name"`
	Answers []Answer `json:"answers"`
	Cost    *float64 `json:"cost,omitempty"`
	Replace bool     `json:"replace,omitempty"`
}

// Answer is one graded answer of the model to onboard.
type Answer struct {
	ID      string `json:"id"`
	Text    string `json:"text,omitempty"`
	Correct *bool  `json:"correct"`
}

// onboard fits the new model's row with onboard.AddModels (everything else
// frozen), writes the new checkpoint next to the current one and swaps it in.
func (s *Server) onboard(w http.ResponseWriter, r *http.Request) error {
	var req OnboardRequest
	if err := decodeJSON(w, r, s.set.MaxBody, &req); err != nil {
		return err
	}
	if strings.TrimSpace(req.Name) == "" {
		return badField("name", "empty model name")
	}
	if len(req.Answers) == 0 {
		return badField("answers", "no answers to fit the model on")
	}
	if req.Cost != nil && !(*req.Cost >= 0 && !math.IsInf(*req.Cost, 0)) {
		return badField("cost", "cost %v must be a finite non-negative number", *req.Cost)
	}
	resp := &model.Responses{Models: []string{req.Name}}
	seen := map[string]bool{}
	for k, a := range req.Answers {
		if strings.TrimSpace(a.ID) == "" {
			return badField(fmt.Sprintf("answers[%d].id", k), "empty id")
		}
		if a.Correct == nil {
			return badField(fmt.Sprintf("answers[%d].correct", k), "missing: true or false")
		}
		if seen[a.ID] {
			return badField(fmt.Sprintf("answers[%d].id", k), "question %q is answered twice", a.ID)
		}
		seen[a.ID] = true
		resp.Items = append(resp.Items, a.ID)
		resp.ItemText = append(resp.ItemText, a.Text)
		label := uint8(0)
		if *a.Correct {
			label = 1
		}
		resp.Model = append(resp.Model, 0)
		resp.Item = append(resp.Item, int32(k))
		resp.Label = append(resp.Label, label)
	}
	release, err := s.acquire(r.Context())
	if err != nil {
		return err
	}
	defer release()
	st := s.cur.Load()
	if _, had := st.index[req.Name]; had && !req.Replace {
		return badField("name", "model %q is already in the checkpoint (send replace: true to refit it)", req.Name)
	}
	for k, a := range req.Answers {
		if _, known := indexOfItem(st, a.ID); !known && strings.TrimSpace(a.Text) == "" {
			return badField(fmt.Sprintf("answers[%d].text", k), "question %q is not in the checkpoint; send its text", a.ID)
		}
	}
	res, err := onboard.AddModels(r.Context(), st.ck, resp, onboard.AddModelsOptions{Replace: req.Replace})
	if err != nil {
		return badField("answers", "%v", err)
	}
	if st.domain != nil {
		// The onboarded checkpoint has the same questions: the same domain.
		b, err := st.domain.Marshal()
		if err != nil {
			return err
		}
		if res.Checkpoint.Files == nil {
			res.Checkpoint.Files = map[string][]byte{}
		}
		res.Checkpoint.Files[checkpoint.DomainFile] = b
	}
	dir, err := s.writeNext(st.dir, req.Name, res.Checkpoint)
	if err != nil {
		s.metrics.reloads.WithLabelValues("failed").Inc()
		return err
	}
	extra := s.extra
	if req.Cost != nil {
		extra = withCost(extra, req.Name, *req.Cost)
	}
	lctx, cancel := context.WithTimeout(r.Context(), s.set.ReloadTimeout)
	defer cancel()
	nst, err := s.loadState(lctx, dir, s.set.Costs, extra)
	if err != nil {
		s.metrics.reloads.WithLabelValues("failed").Inc()
		return fmt.Errorf("onboarded checkpoint %s does not load (still serving %s): %w", dir, st.dir, err)
	}
	s.extra = extra
	s.cur.Store(nst)
	s.metrics.reloads.WithLabelValues("ok").Inc()
	s.metrics.models.Set(float64(nst.model().NumModels()))
	s.set.Log.Printf("serve: onboarded %s into %s (previous checkpoint kept in %s)", req.Name, dir, st.dir)
	writeJSON(w, http.StatusCreated, map[string]any{"checkpoint": dir, "previous": st.dir, "added": res.Added, "new_items": res.NewItems})
	return nil
}

// finiteP refuses a probability that is not finite (the question
// embeddings are checked where they are made; this is the last guard
// before an answer would carry NaN).
func finiteP(st *state, mp route.ModelP, query string) error {
	if model.Finite(mp.P) {
		return nil
	}
	return fmt.Errorf("%s: P(correct) of model %q for query %q is %v, not a probability (tensor M row %d)",
		st.ck.Where(), st.model().Models[mp.Model], query, mp.P, mp.Model)
}

func indexOfItem(st *state, id string) (int, bool) {
	for j, it := range st.model().Items {
		if it == id {
			return j, true
		}
	}
	return -1, false
}

// writeNext writes ck as a new folder beside dir, named as jeirt add-model
// names its output (checkpoint.OnboardedDir): runs/swe, then
// runs/swe.plus-new-model, runs/swe.plus-other, ...
func (s *Server) writeNext(dir, name string, ck *checkpoint.Checkpoint) (string, error) {
	for tries := 0; ; tries++ {
		next := checkpoint.OnboardedDir(dir, []string{name})
		err := ck.Write(next, false)
		if err == nil {
			return next, nil
		}
		if tries > 100 || !fileExists(next) { // not another writer taking the name first
			return "", fmt.Errorf("writing the onboarded checkpoint %s: %w", next, err)
		}
	}
}

func (s *Server) reload(w http.ResponseWriter, r *http.Request) error {
	if err := s.Reload(r.Context()); err != nil {
		return &requestError{Status: http.StatusInternalServerError, Code: "reload_failed", Msg: err.Error()}
	}
	st := s.cur.Load()
	writeJSON(w, http.StatusOK, map[string]any{"checkpoint": st.dir, "models": st.model().NumModels()})
	return nil
}
