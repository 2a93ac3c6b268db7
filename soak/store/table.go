package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The small tables, each one JSON file in the store, replaced atomically
// as a whole under the store's lock.
const (
	alertsFile    = "alerts.json"    // map[fingerprint]alerts.StoredAlert
	startedFile   = "started.json"   // []StartedTarget
	baselinesFile = "baselines.json" // map[job]Baseline
)

// readTable decodes the table in file into v; a missing file leaves v as
// it is.
func (s *Store) readTable(file string, v any) error {
	path := filepath.Join(s.root, file)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s is damaged (%v): move it aside, and soakd starts it anew", path, err)
	}
	return nil
}

// writeTable replaces the table in file with v.
func (s *Store) writeTable(file string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(s.root, file), b)
}

// updateTable reads the table in file into a new T, lets change change
// it and writes it back, all under the store's lock.
func updateTable[T any](s *Store, file string, change func(*T)) error {
	return s.locked(func() error {
		var v T
		if err := s.readTable(file, &v); err != nil {
			return err
		}
		change(&v)
		return s.writeTable(file, v)
	})
}
