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
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jeirt/jeirt/model"
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
	// Log receives reloads, onboardings and upstream failures; nil is silent.
	Log model.Logf
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
	return s
}

// Server serves one checkpoint. It is safe for concurrent use.
type Server struct {
	set       Settings
	cur       atomic.Pointer[state]
	mu        sync.Mutex // serialises reloads and onboardings
	extra     map[string]float64
	upstreams map[string]Upstream
	client    *http.Client
	metrics   *metrics
	mux       *http.ServeMux
}

// New loads the checkpoint, costs and upstreams of s.
func New(s Settings) (*Server, error) {
	s = s.withDefaults()
	if s.Checkpoint == "" {
		return nil, fmt.Errorf("serve: no checkpoint folder")
	}
	st, err := loadState(s.Checkpoint, s.Costs, nil)
	if err != nil {
		return nil, err
	}
	st.ck.LogWarnings(s.Log)
	s.Log.Printf("serve: %s", st.routerLine())
	srv := &Server{set: s, metrics: newMetrics(), client: &http.Client{Transport: &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		ResponseHeaderTimeout: s.UpstreamTimeout,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
	}}}
	if s.Upstreams != "" {
		if srv.upstreams, err = ReadUpstreams(s.Upstreams); err != nil {
			return nil, err
		}
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
// swaps them in; on error the old ones stay and the error says why.
func (s *Server) Reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir := s.cur.Load().dir
	st, err := loadState(dir, s.set.Costs, s.extra)
	if err != nil {
		s.metrics.reloads.WithLabelValues("failed").Inc()
		s.set.Log.Printf("serve: reload of %s failed, still serving the previous checkpoint: %v", dir, err)
		return fmt.Errorf("reload of %s failed (still serving the previous checkpoint): %w", dir, err)
	}
	st.ck.LogWarnings(s.set.Log)
	s.cur.Store(st)
	s.metrics.reloads.WithLabelValues("ok").Inc()
	s.metrics.models.Set(float64(st.model().NumModels()))
	s.set.Log.Printf("serve: reloaded %s (%d models, %d items); %s", dir, st.model().NumModels(), st.model().NumItems(), st.routerLine())
	return nil
}

// Handler is the service's HTTP handler.
func (s *Server) Handler() http.Handler { return s.mux }

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	handle := func(pattern, name string, admin bool, h func(http.ResponseWriter, *http.Request) error) {
		if admin && s.set.Token == "" {
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
	metricsH := promhttpHandler(s.metrics.reg)
	s.mux.Handle("GET /metrics", s.instrument("metrics", true, func(w http.ResponseWriter, r *http.Request) error {
		metricsH.ServeHTTP(w, r)
		return nil
	}))
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &requestError{Status: http.StatusNotFound, Msg: fmt.Sprintf("no route %s %s", r.Method, r.URL.Path)})
	})
}

// statusWriter records the status for the metrics; Unwrap lets
// http.ResponseController reach Flush and the write deadline.
type statusWriter struct {
	http.ResponseWriter
	status int
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
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (s *Server) instrument(name string, auth bool, h func(http.ResponseWriter, *http.Request) error) http.Handler {
	dur := s.metrics.latency.WithLabelValues(name)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		var err error
		if auth && !s.authorized(r) {
			sw.Header().Set("WWW-Authenticate", `Bearer realm="jeirt"`)
			err = &requestError{Status: http.StatusUnauthorized, Msg: "missing or wrong bearer token (Authorization: Bearer ...)"}
		} else {
			err = h(sw, r)
		}
		if err != nil {
			if sw.status != 0 { // the answer had begun (a stream): nothing more to say
				s.set.Log.Printf("serve: %s %s: %v", r.Method, r.URL.Path, err)
			} else {
				writeError(sw, err)
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
