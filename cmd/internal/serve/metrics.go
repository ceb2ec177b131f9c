package serve

import (
	"net/http"

	"github.com/jeirt/jeirt/cmd/internal/serve/redact"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

type metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	routed      *prometheus.CounterVec
	outOfDomain prometheus.Counter
	reloads     *prometheus.CounterVec
	models      prometheus.Gauge
	// upstreamFailures counts chats an upstream failed, by upstream and
	// reason (unreachable, timeout, status, refused, redirect, not_json,
	// too_large, cut, truncated).
	upstreamFailures *prometheus.CounterVec
	// clientDisconnects counts chats whose client went away before the
	// upstream's answer was passed on, by upstream.
	clientDisconnects *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jeirt_requests_total",
			Help: "HTTP requests by route and status code."}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "jeirt_request_duration_seconds",
			Help:    "Time to answer a request, by route (for chat: until the upstream's answer is fully passed on).",
			Buckets: []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{"route"}),
		routed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jeirt_routed_total",
			Help: "Queries routed, by chosen model and rule."}, []string{"model", "rule"}),
		outOfDomain: prometheus.NewCounter(prometheus.CounterOpts{Name: "jeirt_out_of_domain_total",
			Help: "Queries flagged out of domain (the JE-IRT router has no such detector yet, so this stays 0)."}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jeirt_reloads_total",
			Help: "Checkpoint reloads and onboardings, by result (ok, failed)."}, []string{"result"}),
		models: prometheus.NewGauge(prometheus.GaugeOpts{Name: "jeirt_models",
			Help: "Models of the checkpoint being served."}),
		upstreamFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jeirt_upstream_failures_total",
			Help: "Chats an upstream failed, by upstream and reason: unreachable, timeout, status (an error status), refused (400, 422 or 429, passed on to the client), redirect, not_json (an answer that is not JSON), too_large (an answer over 64 MiB), cut (a body cut off), truncated (a stream that ended without [DONE] or a finish reason)."},
			[]string{"upstream", "reason"}),
		clientDisconnects: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jeirt_client_disconnects_total",
			Help: "Chats whose client went away before the upstream's answer was passed on (not an upstream failure), by upstream."},
			[]string{"upstream"}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.routed, m.outOfDomain, m.reloads, m.models, m.upstreamFailures, m.clientDisconnects,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func promhttpHandler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{})
}

// maskedGatherer is the registry as /metrics serves it: every label value
// and help text masked, whatever the format the scraper asks for.
type maskedGatherer struct {
	g    prometheus.Gatherer
	mask func() *redact.Masker
}

func (m maskedGatherer) Gather() ([]*dto.MetricFamily, error) {
	fams, err := m.g.Gather()
	mask := m.mask()
	for _, f := range fams {
		if f.Help != nil {
			h := mask.Mask(f.GetHelp())
			f.Help = &h
		}
		for _, mt := range f.Metric {
			for _, l := range mt.Label {
				v := mask.Mask(l.GetValue())
				l.Value = &v
			}
		}
	}
	return fams, err
}
