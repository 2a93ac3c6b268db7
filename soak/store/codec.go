package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak"
	"github.com/soakd/soakd/soak/verdict"
)

// codec stores a sample as its JSON compressed with zstd against a raw
// dictionary, the JSON of a typical record: the field names then cost
// next to nothing and a row holds little more than its numbers (about
// 1 KB of JSON becomes about 100-200 bytes). The dictionaries live in the
// dicts table, so rows stay readable when a later soakd changes its
// dictionary. A row that starts with '{' is plain JSON.
type codec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

// loadCodec registers this build's dictionary in the database (once) and
// builds an encoder for it and a decoder for every stored dictionary.
func loadCodec(ctx context.Context, db *sql.DB) (*codec, error) {
	content := dictContent()
	dicts, err := readDicts(ctx, db)
	if err != nil {
		return nil, err
	}
	id := uint32(0)
	for did, c := range dicts {
		if bytes.Equal(c, content) {
			id = did
		}
	}
	if id == 0 {
		res, err := db.ExecContext(ctx, `INSERT INTO dicts(content) VALUES(?)`, content)
		if err != nil {
			return nil, fmt.Errorf("storing the sample dictionary: %w", err)
		}
		n, _ := res.LastInsertId()
		id = uint32(n)
		dicts[id] = content
	}
	// A sample is about 1 KB: a 64 KiB window with the low-memory
	// buffers holds it and the dictionary, where the defaults would
	// allocate 8 MiB of history that no sample reaches.
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderDictRaw(id, content), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(1<<16), zstd.WithLowerEncoderMem(true))
	if err != nil {
		return nil, err
	}
	opts := []zstd.DOption{zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(64 << 20)}
	for did, c := range dicts {
		opts = append(opts, zstd.WithDecoderDictRaw(did, c))
	}
	dec, err := zstd.NewReader(nil, opts...)
	if err != nil {
		return nil, err
	}
	return &codec{enc: enc, dec: dec}, nil
}

func readDicts(ctx context.Context, db *sql.DB) (map[uint32][]byte, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, content FROM dicts`)
	if err != nil {
		return nil, fmt.Errorf("reading the sample dictionaries: %w", err)
	}
	defer rows.Close()
	dicts := map[uint32][]byte{}
	for rows.Next() {
		var id int64
		var c []byte
		if err := rows.Scan(&id, &c); err != nil {
			return nil, err
		}
		dicts[uint32(id)] = c
	}
	return dicts, rows.Err()
}

func (c *codec) encode(rec soak.Record) ([]byte, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	return c.enc.EncodeAll(b, make([]byte, 0, len(b)/4)), nil
}

func (c *codec) decode(b []byte) (soak.Record, error) {
	var r soak.Record
	if len(b) == 0 || b[0] != '{' {
		var err error
		if b, err = c.dec.DecodeAll(b, nil); err != nil {
			return r, err
		}
	}
	err := json.Unmarshal(b, &r)
	return r, err
}

func (c *codec) close() {
	c.enc.Close()
	c.dec.Close()
}

// dictContent is the JSON of a typical record. Changing it is safe (the
// new one is stored beside the old) but costs a dictionary per change.
func dictContent() []byte {
	members := make([]probes.Member, 5)
	top := make([]probes.ProcStat, len(members))
	for i := range members {
		members[i] = probes.Member{PID: 123456, Start: 12345678, PPID: 123456, Name: "server",
			RSS: 123456789, FDs: 1234, Threads: 12, CPU: 123.45}
		top[i] = members[i].Stat()
	}
	r := soak.Record{
		Sample: probes.Sample{
			Time: time.Date(2026, 1, 1, 2, 3, 4, 567891234, time.UTC), Alive: true, RootPID: 123456, RootStart: 12345678,
			Incarnation: 1, Procs: 5, RSS: 123456789, VMS: 1234567890, Swap: 0, SmapsValid: true, PSS: 123456789, USS: 123456789,
			FDsValid: true, FDs: 123, FDLimit: 1048576, Threads: 12, CPUUser: 123.45, CPUSystem: 12.34,
			CtxVoluntary: 1234567, CtxInvol: 12345, IOValid: true, ReadBytes: 12345, WriteBytes: 12345,
			ReadChars: 123456789, WriteChars: 123456789, TCPValid: true, TCPEstablished: 1, TCPListen: 1,
			SelfUser: 12.34, SelfSystem: 1.23, SelfRSS: 12345678, Top: top, Members: members,
		},
		Elapsed: 1234.5, Phase: verdict.Soak, Requests: 1234567, Errors: 0, Rate: 1234.5, P50: 0.000123, P99: 0.001234,
	}
	b, _ := json.Marshal(r)
	return b
}
