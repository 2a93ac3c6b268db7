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
}

// NewMetrics creates the metrics and registers them on reg (nil: not
// registered). Registering twice (a Manager rebuilt on reload) reuses the
// collector already registered.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{Deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "soakd_alert_deliveries_total",
		Help: "Alert deliveries by sink and result (success, failure, dropped, retry).",
	}, []string{"sink", "result"})}
	if reg == nil {
		return m, nil
	}
	if err := reg.Register(m.Deliveries); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, err
		}
		existing, ok := are.ExistingCollector.(*prometheus.CounterVec)
		if !ok {
			return nil, err
		}
		m.Deliveries = existing
	}
	return m, nil
}

// initSink creates the series of sink at zero, so rate() sees the first
// failure.
func (m *Metrics) initSink(sink string) {
	for _, r := range []string{ResultSuccess, ResultFailure, ResultDropped, ResultRetry} {
		m.Deliveries.WithLabelValues(sink, r)
	}
}
