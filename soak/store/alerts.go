package store

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/soakd/soakd/alerts"
)

// The Store keeps the alert manager's state.
var _ alerts.StateStore = (*Store)(nil)

// SaveAlert inserts or replaces a's state.
func (s *Store) SaveAlert(a alerts.StoredAlert) error {
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("store: encoding alert %s: %w", a.Alert.Fingerprint(), err)
	}
	err = updateTable(s, alertsFile, func(m *map[string]json.RawMessage) {
		if *m == nil {
			*m = map[string]json.RawMessage{}
		}
		(*m)[a.Alert.Fingerprint().String()] = b
	})
	if err != nil {
		return fmt.Errorf("store: saving alert %s: %w", a.Alert.Fingerprint(), err)
	}
	return nil
}

// DeleteAlert forgets the alert fp.
func (s *Store) DeleteAlert(fp alerts.Fingerprint) error {
	err := updateTable(s, alertsFile, func(m *map[string]json.RawMessage) { delete(*m, fp.String()) })
	if err != nil {
		return fmt.Errorf("store: deleting alert %s: %w", fp, err)
	}
	return nil
}

// Alerts returns every stored alert state, by fingerprint.
func (s *Store) Alerts() ([]alerts.StoredAlert, error) {
	var m map[string]json.RawMessage
	if err := s.readTable(alertsFile, &m); err != nil {
		return nil, fmt.Errorf("store: reading alerts: %w", err)
	}
	fps := make([]string, 0, len(m))
	for fp := range m {
		fps = append(fps, fp)
	}
	slices.Sort(fps)
	var out []alerts.StoredAlert
	for _, fp := range fps {
		var a alerts.StoredAlert
		if err := json.Unmarshal(m[fp], &a); err != nil {
			return nil, fmt.Errorf("store: alert %s: %w", fp, err)
		}
		out = append(out, a)
	}
	return out, nil
}
