package store

import (
	"context"
	"database/sql"
	"testing"
	"time"
)

// TestPoolsBounded checks the store's memory bound: one writer and
// ReadConns readers, every one with the bounded page cache and WAL limit,
// and the readers unable to write.
func TestPoolsBounded(t *testing.T) {
	s := openTest(t, t.TempDir())
	for _, p := range []struct {
		name      string
		db        *sql.DB
		n         int
		queryOnly int
	}{
		{"writer", s.db, 1, 0},
		{"reader", s.rdb, ReadConns, 1},
	} {
		if got := p.db.Stats().MaxOpenConnections; got != p.n {
			t.Errorf("%s pool: MaxOpenConnections = %d; want %d", p.name, got, p.n)
		}
		// hold every connection of the pool at once, so each is a
		// different one
		ctx := context.Background()
		for i := range p.n {
			c, err := p.db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, q := range []struct {
				pragma string
				want   int
			}{{"cache_size", -CacheKiB}, {"journal_size_limit", walLimit}, {"query_only", p.queryOnly}} {
				var got int
				if err := c.QueryRowContext(ctx, "PRAGMA "+q.pragma).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got != q.want {
					t.Errorf("%s connection %d: PRAGMA %s = %d; want %d", p.name, i, q.pragma, got, q.want)
				}
			}
		}
	}
}

// TestWriteWhileReadersBusy writes a sample while every reader is in the
// middle of a walk of the samples: the writer has its own connection.
func TestWriteWhileReadersBusy(t *testing.T) {
	s := openTest(t, t.TempDir())
	id, _ := s.CreateRun("web", TriggerSchedule, "", time.Now())
	if err := s.AppendSample(id, fullRecord(0)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range ReadConns {
		c, err := s.rdb.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		rows, err := c.QueryContext(ctx, `SELECT data FROM samples WHERE run_id = ?`, id)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		if !rows.Next() {
			t.Fatal("no sample")
		}
	}
	if err := s.AppendSample(id, fullRecord(1)); err != nil {
		t.Fatal(err)
	}
}
