package serve

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

type metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	routed      *prometheus.CounterVec
	outOfDomain prometheus.Counter
	reloads     *prometheus.CounterVec
	models      prometheus.Gauge
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
	}
	m.reg.MustRegister(m.requests, m.latency, m.routed, m.outOfDomain, m.reloads, m.models,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func promhttpHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
