package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/klauspost/compress/zstd"

	"github.com/soakd/soakd/soak/model"
)

// dictsDir holds the sample dictionaries, one file each, named by ID.
const dictsDir = "dicts"

// codec stores a sample as its JSON compressed with zstd against a raw
// dictionary, the JSON of a typical record: the field names then cost
// next to nothing and a sample holds little more than its numbers (about
// 1 KB of JSON becomes about 100-200 bytes). The dictionaries live in the
// store's dicts directory, so samples stay readable when a later soakd
// changes its dictionary. A sample that starts with '{' is plain JSON.
type codec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

// loadCodec registers this build's dictionary in the store (once) and
// builds an encoder for it and a decoder for every stored dictionary.
func (s *Store) loadCodec() (*codec, error) {
	content := dictContent()
	var dicts map[uint32][]byte
	id := uint32(0)
	err := s.locked(func() error {
		var err error
		if dicts, err = s.readDicts(); err != nil {
			return err
		}
		for did, c := range dicts {
			if bytes.Equal(c, content) {
				id = did
			}
		}
		if id != 0 {
			return nil
		}
		for did := range dicts {
			id = max(id, did)
		}
		id++
		dicts[id] = content
		if err := writeAtomic(filepath.Join(s.root, dictsDir, strconv.FormatUint(uint64(id), 10)), content); err != nil {
			return fmt.Errorf("storing the sample dictionary: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
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

// readDicts reads the stored dictionaries, by ID; other files (a
// temporary one a crash left) are skipped.
func (s *Store) readDicts() (map[uint32][]byte, error) {
	dir := filepath.Join(s.root, dictsDir)
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading the sample dictionaries: %w", err)
	}
	dicts := map[uint32][]byte{}
	for _, e := range ents {
		id, err := strconv.ParseUint(e.Name(), 10, 32)
		if err != nil || id == 0 {
			continue
		}
		c, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("reading the sample dictionaries: %w", err)
		}
		dicts[uint32(id)] = c
	}
	return dicts, nil
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
