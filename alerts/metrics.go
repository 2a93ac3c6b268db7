package alerts

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Delivery results, the values of the result label of
// soakd_alert_deliveries_total.
const (
	ResultSuccess = "success"
	ResultFailure = "failure"
	ResultDropped = "dropped"
	ResultRetry   = "retry"
)

// Metrics are the alert delivery metrics.
type Metrics struct {
	// Deliveries is soakd_alert_deliveries_total{sink,result}.
	Deliveries *prometheus.CounterVec
	// Failing is soakd_alert_delivery_failing{sink}: 1 from a sink's
	// max_attempts-th failed send in a row to its next successful one.
	Failing *prometheus.GaugeVec
}

// NewMetrics creates the metrics and registers them on reg (nil: not
// registered). Registering twice (a Manager rebuilt on reload) reuses the
// collectors already registered.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		Deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "soakd_alert_deliveries_total",
			Help: "Alert deliveries by sink and result (success, failure, dropped, retry).",
		}, []string{"sink", "result"}),
		Failing: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "soakd_alert_delivery_failing",
			Help: "1 while a sink's sends fail: from its max_attempts-th failed send in a row to its next successful send.",
		}, []string{"sink"}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.Deliveries, err = register(reg, m.Deliveries); err != nil {
		return nil, err
	}
	if m.Failing, err = register(reg, m.Failing); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c on reg, or returns the collector of the same
// kind already registered there.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if !errors.As(err, &are) {
		return c, err
	}
	existing, ok := are.ExistingCollector.(C)
	if !ok {
		return c, err
	}
	return existing, nil
}

// initSink creates the series of sink at zero, so rate() sees the first
// failure.
func (m *Metrics) initSink(sink string) {
	for _, r := range []string{ResultSuccess, ResultFailure, ResultDropped, ResultRetry} {
		m.Deliveries.WithLabelValues(sink, r)
	}
	m.Failing.WithLabelValues(sink)
}
