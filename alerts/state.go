package alerts

import "time"

// StoredAlert is one alert's state as the Manager persists it: the alert
// (firing, or resolved and not yet confirmed by every sink), its
// generation, and what each sink last confirmed.
type StoredAlert struct {
	Alert Alert `json:"alert"`
	// Gen is bumped whenever the alert must be sent again at once: it
	// started, its run changed, or it was resolved. Generations come from
	// one counter per Manager, so they only grow.
	Gen   uint64               `json:"gen"`
	Sinks map[string]SinkState `json:"sinks,omitempty"`
	// ResolveOnDelivery says a resolve came while the firing alert was
	// not yet delivered to every sink of its route: it stays firing until
	// they all have it, and is resolved then. A leak found while the
	// receiver was down is never resolved before it was seen.
	ResolveOnDelivery bool `json:"resolve_on_delivery,omitempty"`
	// ResolveWhy is the summary the alert takes when it is resolved
	// (Manager.ResolveBecause), kept while its resolve waits for a
	// delivery.
	ResolveWhy string `json:"resolve_why,omitempty"`
	// Updated says the annotations changed since the last generation
	// (a live look's new figures, kept for the next send): a run's final
	// analysis sends them at once (Manager.FireFinal).
	Updated bool `json:"updated,omitempty"`
}

// SinkState is what one sink confirmed of an alert.
type SinkState struct {
	// Gen is the generation the sink last confirmed; the alert is pending
	// for the sink while it is below StoredAlert.Gen.
	Gen uint64 `json:"gen"`
	// Delivered is the time of the sink's last confirmed delivery.
	Delivered time.Time `json:"delivered,omitzero"`
}

// StateStore persists the Manager's alerts (soakd's store implements it),
// so that a restarted soakd re-sends what still fires and resolves what no
// longer does. Its methods are called with the Manager's lock held, one at
// a time.
type StateStore interface {
	// SaveAlert inserts or replaces the alert with a's fingerprint.
	SaveAlert(a StoredAlert) error
	// DeleteAlert forgets an alert every sink confirmed resolved.
	DeleteAlert(fp Fingerprint) error
}

func (s StoredAlert) clone() StoredAlert {
	c := s
	c.Alert = s.Alert.clone()
	c.Sinks = make(map[string]SinkState, len(s.Sinks))
	for k, v := range s.Sinks {
		c.Sinks[k] = v
	}
	return c
}
