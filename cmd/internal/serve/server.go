// Package serve is the JE-IRT router as an HTTP service: routing and
// prediction for query texts, onboarding of new models, and an
// OpenAI-compatible chat endpoint that routes each request to the chosen
// model's upstream server (RouteLLM's serving pattern; Ong et al. 2024,
// "RouteLLM: Learning to Route LLMs with Preference Data").
//
// Routing applies model.Router exactly as jeirt route does. The checkpoint is
// held behind an atomic pointer: a reload or an onboarding swaps it without
// disturbing requests in flight, and a reload that fails keeps the old one.
package serve

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jeirt/jeirt/cmd/internal/serve/redact"
	"github.com/jeirt/jeirt/cmd/internal/serve/upstream"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/prometheus/client_golang/prometheus"
)

// Settings configure a Server; the zero value of every field but Checkpoint
// works.
type Settings struct {
	// Checkpoint is the folder written by jeirt train or add-model.
	Checkpoint string
	// Costs is a model,cost CSV (as for jeirt route --costs); "" means none.
	Costs string
	// Upstreams is a YAML or JSON file naming the OpenAI-compatible server of
	// each model (see ReadUpstreams); "" disables /v1/chat/completions.
	Upstreams string
	// Token, when not empty, is the bearer token every route but /healthz
	// requires; the admin routes (POST /admin/reload, POST /v1/models) exist
	// only when it is set.
	Token string
	// MaxBody is the largest request body in bytes but chat's. Zero means
	// 1 MiB.
	MaxBody int64
	// MaxChatBody is the largest body of a chat request (a long agent
	// context is many megabytes). Zero means 16 MiB.
	MaxChatBody int64
	// MaxBatch is the most queries (or pairs) of one request. Zero means 256.
	MaxBatch int
	// UpstreamTimeout bounds one forwarded chat request, streaming included.
	// Zero means 5 minutes.
	UpstreamTimeout time.Duration
	// Top is the number of alternatives listed per routed query. Zero means 3.
	Top int
	// ReloadTimeout bounds one reload (or the loading of an onboarded
	// checkpoint): a checkpoint folder that cannot be read in time (a FIFO
	// in it, a hung network file system) fails the reload and the previous
	// checkpoint keeps serving. Zero means 1 minute.
	ReloadTimeout time.Duration
	// Log receives reloads, onboardings and upstream failures, every line
	// masked (no configured secret reaches it); nil is silent.
	Log progress.Logf
}

func (s Settings) withDefaults() Settings {
	if s.MaxBody == 0 {
		s.MaxBody = 1 << 20
	}
	if s.MaxChatBody == 0 {
		s.MaxChatBody = 16 << 20
	}
	if s.MaxBatch == 0 {
		s.MaxBatch = 256
	}
	if s.UpstreamTimeout == 0 {
		s.UpstreamTimeout = 5 * time.Minute
	}
	if s.Top == 0 {
		s.Top = 3
	}
	if s.ReloadTimeout == 0 {
		s.ReloadTimeout = time.Minute
	}
	return s
}

// Server serves one checkpoint. It is safe for concurrent use.
type Server struct {
	set       Settings
	cur       atomic.Pointer[state]
	swap      chan struct{} // a slot: serialises reloads and onboardings
	loading   atomic.Int32  // checkpoint reads that have not returned
	secrets   secretSources
	masks     atomic.Pointer[cachedMasker]
	extra     map[string]float64
	upstreams map[string]Upstream
	client    *http.Client
	metrics   *metrics
	mux       *http.ServeMux
	adminOff  []string // the admin routes' patterns, when there is no token to guard them
}

// New loads the checkpoint, costs and upstreams of s.
func New(s Settings) (*Server, error) {
	s = s.withDefaults()
	if s.Checkpoint == "" {
		return nil, fmt.Errorf("serve: no checkpoint folder")
	}
	if s.ReloadTimeout < 0 {
		return nil, model.FieldErrorf("ReloadTimeout", "serve: {ReloadTimeout} %v: want a positive duration (every reload would fail at once)", s.ReloadTimeout)
	}
	srv := &Server{set: s, swap: make(chan struct{}, 1), metrics: newMetrics(), client: &http.Client{Transport: &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		ResponseHeaderTimeout: s.UpstreamTimeout,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
	}, CheckRedirect: upstream.CheckRedirect}}
	var err error
	if s.Upstreams != "" {
		if srv.upstreams, err = ReadUpstreams(s.Upstreams); err != nil {
			return nil, err
		}
	}
	srv.secrets = newSecretSources(s.Token, srv.upstreams)
	if log := s.Log; log != nil {
		srv.set.Log = func(format string, args ...any) { log("%s", srv.mask().Mask(fmt.Sprintf(format, args...))) }
	}
	s = srv.set
	for _, short := range srv.mask().Short() {
		s.Log.Printf("serve: warning: a configured key, token or password of %d characters is too short to be masked in text (only where it stands in a URL)", len(short))
	}
	st, err := srv.loadState(context.Background(), s.Checkpoint, s.Costs, nil)
	if err != nil {
		return nil, err
	}
	st.ck.LogWarnings(s.Log)
	s.Log.Printf("serve: %s", st.routerLine())
	if s.Upstreams != "" {
		if err := srv.checkRoutable(st); err != nil {
			return nil, err
		}
	}
	srv.cur.Store(st)
	srv.metrics.models.Set(float64(st.model().NumModels()))
	srv.routes()
	return srv, nil
}

// Checkpoint is the folder of the checkpoint being served.
func (s *Server) Checkpoint() string { return s.cur.Load().dir }

// Registry is the Prometheus registry /metrics serves.
func (s *Server) Registry() *prometheus.Registry { return s.metrics.reg }

// Reload reads the current checkpoint folder and the costs file again and
// swaps them in; on error the old ones stay and the error says why. It
// gives up when ctx is done or after Settings.ReloadTimeout, and never
// waits on an earlier reload that is stuck.
func (s *Server) Reload(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.set.ReloadTimeout)
	defer cancel()
	dir := s.cur.Load().dir
	fail := func(err error) error {
		s.metrics.reloads.WithLabelValues("failed").Inc()
		s.set.Log.Printf("serve: reload of %s failed, still serving the previous checkpoint: %v", dir, err)
		return fmt.Errorf("reload of %s failed (still serving the previous checkpoint): %w", dir, err)
	}
	release, err := s.acquire(ctx)
	if err != nil {
		return fail(err)
	}
	defer release()
	dir = s.cur.Load().dir
	st, err := s.loadState(ctx, dir, s.set.Costs, s.extra)
	if err != nil {
		return fail(err)
	}
	st.ck.LogWarnings(s.set.Log)
	s.cur.Store(st)
	s.metrics.reloads.WithLabelValues("ok").Inc()
	s.metrics.models.Set(float64(st.model().NumModels()))
	s.set.Log.Printf("serve: reloaded %s (%d models, %d items); %s", dir, st.model().NumModels(), st.model().NumItems(), st.routerLine())
	return nil
}

// acquire takes the slot that serialises reloads and onboardings, or gives
// up when ctx is done.
func (s *Server) acquire(ctx context.Context) (release func(), err error) {
	select {
	case s.swap <- struct{}{}:
		return func() { <-s.swap }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("another reload or onboarding is still running (%w)", context.Cause(ctx))
	}
}

// maxStuckLoads is the most checkpoint reads left blocked (each holds a
// goroutine and a thread until the file system answers) before a reload is
// refused outright.
const maxStuckLoads = 4

// loadState is loadState run so that ctx bounds it: a read that blocks (a
// FIFO in the folder, a hung network file system) is left behind, the
// error says so, and the slot it held is free for the next reload.
func (s *Server) loadState(ctx context.Context, dir, costsPath string, extra map[string]float64) (*state, error) {
	if n := s.loading.Load(); n >= maxStuckLoads {
		return nil, fmt.Errorf("%d earlier reads of the checkpoint have not returned: is a file of %s a FIFO, or its file system hung?", n, dir)
	}
	type result struct {
		st  *state
		err error
	}
	done := make(chan result, 1)
	s.loading.Add(1)
	go func() {
		defer s.loading.Add(-1)
		st, err := loadState(dir, costsPath, extra)
		done <- result{st, err}
	}()
	select {
	case r := <-done:
		return r.st, r.err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("reading %s took longer than %v (is one of its files a FIFO, or its file system hung?)", dir, s.set.ReloadTimeout)
		}
		return nil, fmt.Errorf("reading %s: the request was cancelled", dir)
	}
}

// Handler is the service's HTTP handler.
func (s *Server) Handler() http.Handler { return s.mux }

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	handle := func(pattern, name string, admin bool, h func(http.ResponseWriter, *http.Request) error) {
		if admin && s.set.Token == "" {
			s.adminOff = append(s.adminOff, pattern)
			return
		}
		s.mux.Handle(pattern, s.instrument(name, pattern != "GET /healthz", h))
	}
	handle("GET /healthz", "healthz", false, s.healthz)
	handle("POST /v1/route", "route", false, s.route)
	handle("POST /v1/predict", "predict", false, s.predict)
	handle("GET /v1/models", "models", false, s.models)
	handle("GET /v1/models/{id...}", "models", false, s.modelByID)
	handle("GET /v1/jeirt/models", "jeirt-models", false, s.jeirtModels)
	handle("GET /v1/router", "router", false, s.router)
	handle("POST /v1/models", "onboard", true, s.onboard)
	handle("POST /v1/chat/completions", "chat", false, s.chat)
	handle("POST /admin/reload", "reload", true, s.reload)
	metricsH := promhttpHandler(maskedGatherer{s.metrics.reg, s.mask})
	s.mux.Handle("GET /metrics", s.instrument("metrics", true, func(w http.ResponseWriter, r *http.Request) error {
		metricsH.ServeHTTP(w, r)
		return nil
	}))
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if slices.Contains(s.adminOff, r.Method+" "+r.URL.Path) {
			writeError(w, &requestError{Status: http.StatusNotFound, Msg: fmt.Sprintf("no route %s %s: it is an admin route, served only when jeirt serve has a token (--token-env)", r.Method, r.URL.Path)}, s.mask())
			return
		}
		if allow := s.allowed(r); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, &requestError{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed",
				Msg: fmt.Sprintf("%s %s: this route answers %s", r.Method, r.URL.Path, strings.Join(allow, ", "))}, s.mask())
			return
		}
		writeError(w, &requestError{Status: http.StatusNotFound, Msg: fmt.Sprintf("no route %s %s", r.Method, r.URL.Path)}, s.mask())
	})
}

// allowed are the methods other routes answer r's path with (for 405's
// Allow header); none for a path no route serves.
func (s *Server) allowed(r *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" {
			out = append(out, m)
		}
	}
	return out
}

// statusWriter records the status for the metrics and passes every byte
// written through the masker's Exact (when exact is set: every route but
// /metrics, whose labels are masked where they are gathered, and whose body
// may be compressed); Unwrap lets http.ResponseController reach Flush and
// the write deadline.
type statusWriter struct {
	http.ResponseWriter
	status int
	exact  *redact.Masker
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.exact != nil {
		if _, err := w.ResponseWriter.Write([]byte(w.exact.Exact(string(b)))); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (s *Server) instrument(name string, auth bool, h func(http.ResponseWriter, *http.Request) error) http.Handler {
	dur := s.metrics.latency.WithLabelValues(name)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		if name != "metrics" {
			sw.exact = s.mask()
		}
		var err error
		if auth && !s.authorized(r) {
			sw.Header().Set("WWW-Authenticate", `Bearer realm="jeirt"`)
			err = &requestError{Status: http.StatusUnauthorized, Code: "invalid_api_key", Msg: "missing or wrong bearer token (Authorization: Bearer ...)"}
		} else {
			err = h(sw, r)
		}
		if err != nil {
			if sw.status != 0 { // the answer had begun (a stream): nothing more to say
				s.set.Log.Printf("serve: %s %s: %v", r.Method, r.URL.Path, err)
			} else {
				writeError(sw, err, s.mask())
			}
		}
		s.metrics.requests.WithLabelValues(name, fmt.Sprint(sw.status)).Inc()
		dur.Observe(time.Since(start).Seconds())
	})
}

func (s *Server) authorized(r *http.Request) bool {
	if s.set.Token == "" {
		return true
	}
	got := r.Header.Get("Authorization")
	want := "Bearer " + s.set.Token
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// ServeSettings are the listener's limits; the zero value works.
type ServeSettings struct {
	// ReadTimeout, WriteTimeout and IdleTimeout of the http.Server. Zero
	// means 30 s, 60 s and 120 s. Chat streams extend their own write
	// deadline up to the upstream timeout.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// Drain is how long shutdown waits for requests in flight. Zero means 30 s.
	Drain time.Duration
	// GCPercent is the garbage collector's target while serving (see
	// runtime/debug.SetGCPercent). The live heap of a server is a few MB and
	// every request allocates, so the default target, 100, collects hundreds
	// of times a second under load; zero means 400 (the heap stays flat at a
	// few tens of MB and the slowest requests are faster), negative leaves
	// the runtime's setting, and so does a GOGC environment variable.
	GCPercent int
}

// Serve answers on ln until ctx is done, then shuts down gracefully, waiting
// up to Drain for requests in flight.
func (s *Server) Serve(ctx context.Context, ln net.Listener, ss ServeSettings) error {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&ss.ReadTimeout, 30*time.Second)
	def(&ss.WriteTimeout, 60*time.Second)
	def(&ss.IdleTimeout, 120*time.Second)
	def(&ss.Drain, 30*time.Second)
	if ss.GCPercent == 0 {
		ss.GCPercent = 400
	}
	if _, set := os.LookupEnv("GOGC"); !set && ss.GCPercent > 0 {
		defer debug.SetGCPercent(debug.SetGCPercent(ss.GCPercent))
	}
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: ss.ReadTimeout,
		WriteTimeout: ss.WriteTimeout, IdleTimeout: ss.IdleTimeout, MaxHeaderBytes: 64 << 10}
	if s.set.Log != nil { // net/http's own complaints go to the masked log too
		hs.ErrorLog = log.New(logWriter(s.set.Log), "serve: http: ", 0)
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	dctx, cancel := context.WithTimeout(context.Background(), ss.Drain)
	defer cancel()
	err := hs.Shutdown(dctx)
	if errors.Is(err, context.DeadlineExceeded) {
		hs.Close()
		return fmt.Errorf("serve: requests still running after the %v drain timeout were cut off", ss.Drain)
	}
	if e := <-done; !errors.Is(e, http.ErrServerClosed) {
		return e
	}
	return err
}

// logWriter makes a Logf an io.Writer (for http.Server's ErrorLog).
type logWriter progress.Logf

func (l logWriter) Write(p []byte) (int, error) {
	progress.Logf(l).Printf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
