package daemon

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/soakd/soakd/alerts"
)

// firingCollector exports soakd's own firing alerts as
// soakd_alert_firing{alertname, job, resource} = 1: each finding from its
// first fire to its resolve, with the resource label it first fired with
// (a memory leak's is fixed then, see memoryGroup). The alerts' state is
// in the store, so a restart of soakd changes none of these series. The
// shipped Prometheus rules alert on them, so that Prometheus users get the
// same findings as soakd's own sinks.
type firingCollector struct {
	active func() []alerts.Alert
}

var firingDesc = prometheus.NewDesc("soakd_alert_firing",
	"soakd's own alerts firing now (1), by alertname, job and resource: one finding from its first fire to its resolve, which only evidence brings (a run reading the leak stopped); its resource label is fixed at first fire.",
	[]string{"alertname", "job", "resource"}, nil)

func (c firingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- firingDesc }

func (c firingCollector) Collect(ch chan<- prometheus.Metric) {
	for _, a := range c.active() {
		ch <- prometheus.MustNewConstMetric(firingDesc, prometheus.GaugeValue, 1,
			a.Labels[alerts.LabelAlertname], a.Labels[alerts.LabelJob], a.Labels[alerts.LabelResource])
	}
}
