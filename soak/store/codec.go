package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/klauspost/compress/zstd"

	"github.com/soakd/soakd/soak/model"
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

func (c *codec) encode(rec model.Record) ([]byte, error) {
	// Called directly, the record's MarshalJSON is not scanned and
	// compacted again, as json.Marshal does with a Marshaler's output
	// (that pass tripled the cost of encoding a record).
	b, err := rec.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return c.enc.EncodeAll(b, make([]byte, 0, len(b)/4)), nil
}

func (c *codec) decode(b []byte) (model.Record, error) {
	var r model.Record
	if len(b) == 0 || b[0] != '{' {
		var err error
		if b, err = c.dec.DecodeAll(b, nil); err != nil {
			return r, err
		}
	}
	err := r.UnmarshalJSON(b) // directly: json.Unmarshal would scan b twice
	return r, err
}

func (c *codec) close() {
	c.enc.Close()
	c.dec.Close()
}

// dictContent is the JSON of a typical record. Changing it is safe (the
// new one is stored beside the old) but costs a dictionary per change.
func dictContent() []byte {
	b, _ := json.Marshal(model.TypicalRecord())
	return b
}
