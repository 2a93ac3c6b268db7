package store

import (
	"context"
	"encoding/json"
	"fmt"

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
	_, err = s.db.ExecContext(context.Background(),
		"INSERT INTO alerts(fingerprint, data) VALUES(?, ?) ON CONFLICT(fingerprint) DO UPDATE SET data = excluded.data",
		a.Alert.Fingerprint().String(), b)
	if err != nil {
		return fmt.Errorf("store: saving alert %s: %w", a.Alert.Fingerprint(), err)
	}
	return nil
}

// DeleteAlert forgets the alert fp.
func (s *Store) DeleteAlert(fp alerts.Fingerprint) error {
	if _, err := s.db.ExecContext(context.Background(), "DELETE FROM alerts WHERE fingerprint = ?", fp.String()); err != nil {
		return fmt.Errorf("store: deleting alert %s: %w", fp, err)
	}
	return nil
}

// Alerts returns every stored alert state.
func (s *Store) Alerts() ([]alerts.StoredAlert, error) {
	rows, err := s.rdb.QueryContext(context.Background(), "SELECT fingerprint, data FROM alerts ORDER BY fingerprint")
	if err != nil {
		return nil, fmt.Errorf("store: reading alerts: %w", err)
	}
	defer rows.Close()
	var out []alerts.StoredAlert
	for rows.Next() {
		var fp string
		var b []byte
		if err := rows.Scan(&fp, &b); err != nil {
			return nil, fmt.Errorf("store: reading alerts: %w", err)
		}
		var a alerts.StoredAlert
		if err := json.Unmarshal(b, &a); err != nil {
			return nil, fmt.Errorf("store: alert %s: %w", fp, err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
