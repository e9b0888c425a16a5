package controller

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vapkit/vapkit/policy"
)

// Metrics are the Prometheus metrics of a webhook serving vapkit. A nil
// *Metrics records nothing. Register them once with [Metrics.Register].
type Metrics struct {
	// Requests counts admission requests by outcome: allowed, denied,
	// timeout (the deadline expired), overloaded (no slot under the
	// concurrency cap before the deadline) or invalid.
	Requests *prometheus.CounterVec
	// Decisions counts policy evaluations by policy and outcome (Passed,
	// Failed, Errored), one per evaluated binding and param.
	Decisions *prometheus.CounterVec
	// Latency is the time from receiving a request to answering it.
	Latency prometheus.Histogram
	// Generation is the generation of the evaluator being served.
	Generation prometheus.Gauge
	// ReloadFailures counts compiles or loads that failed and left the
	// previous evaluator serving.
	ReloadFailures prometheus.Counter
}

// NewMetrics creates the metrics, named vapkit_webhook_*.
func NewMetrics() *Metrics {
	return &Metrics{
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vapkit_webhook_requests_total", Help: "Admission requests by outcome.",
		}, []string{"outcome"}),
		Decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vapkit_webhook_policy_decisions_total", Help: "Policy evaluations by policy and outcome.",
		}, []string{"policy", "outcome"}),
		Latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "vapkit_webhook_request_duration_seconds", Help: "Time to answer an admission request.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		Generation: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vapkit_webhook_reload_generation", Help: "Generation of the evaluator being served.",
		}),
		ReloadFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vapkit_webhook_reload_failures_total", Help: "Reloads that failed and kept the previous evaluator.",
		}),
	}
}

// Register registers every metric with r, such as controller-runtime's
// metrics.Registry or a prometheus.NewRegistry().
func (m *Metrics) Register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.Requests, m.Decisions, m.Latency, m.Generation, m.ReloadFailures} {
		if err := r.Register(c); err != nil {
			return err
		}
	}
	return nil
}

func (m *Metrics) request(outcome string, seconds float64, d *policy.Decision) {
	if m == nil {
		return
	}
	m.Requests.WithLabelValues(outcome).Inc()
	if seconds >= 0 { // a review that could not be read has no latency
		m.Latency.Observe(seconds)
	}
	if d == nil {
		return
	}
	for _, tr := range d.Trace {
		switch tr.Outcome {
		case policy.Passed, policy.Failed, policy.Errored:
			m.Decisions.WithLabelValues(tr.Policy, string(tr.Outcome)).Inc()
		}
	}
}

func (m *Metrics) reloaded(generation int64, err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.ReloadFailures.Inc()
		return
	}
	m.Generation.Set(float64(generation))
}
