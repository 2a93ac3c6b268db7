package store

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/soakd/soakd/soak/model"
)

// A run's samples file is a sequence of frames, one per sample: the
// data's length and its CRC-32C (4 bytes each, little-endian), then the
// data (compressed JSON, see codec). A frame cut short, empty, or whose
// checksum does not match, is where the samples end: a crash in the middle
// of a write leaves one at the tail (or zeros, after a power cut), and a
// reader may see one that is being written.
const (
	frameHeader = 8
	maxFrame    = 64 << 20 // a sample is about 200 bytes; more is damage
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maxOpenSamples bounds the samples files kept open for append; more
// running runs than this reopen theirs.
const maxOpenSamples = 64

// sampleFile is a run's samples file open for append.
type sampleFile struct {
	f    *os.File
	size int64 // the end of the last whole frame
}

// AppendSample stores one sample of a run (compressed JSON, see codec) in
// one write to the end of the run's samples file.
func (s *Store) AppendSample(runID int64, rec model.Record) error {
	b, err := s.codec.encode(rec)
	if err != nil {
		return fmt.Errorf("store: run %d: encoding a sample: %w", runID, err)
	}
	if err := s.appendFrame(runID, b); err != nil {
		return fmt.Errorf("store: run %d: writing a sample: %w", runID, err)
	}
	return nil
}

// appendFrame writes data as one frame; a write that fails is cut off
// again, so that the next one follows the last whole frame.
func (s *Store) appendFrame(runID int64, data []byte) error {
	frame := make([]byte, frameHeader+len(data))
	binary.LittleEndian.PutUint32(frame, uint32(len(data)))
	binary.LittleEndian.PutUint32(frame[4:], crc32.Checksum(data, castagnoli))
	copy(frame[frameHeader:], data)
	s.appMu.Lock()
	defer s.appMu.Unlock()
	sf, err := s.openSamples(runID)
	if err != nil {
		return err
	}
	if _, err := sf.f.WriteAt(frame, sf.size); err != nil {
		sf.f.Truncate(sf.size)
		return err
	}
	sf.size += int64(len(frame))
	return nil
}

// openSamples returns the run's samples file open for append, opening it
// (and cutting off a torn frame at its end) if needed. Call it with appMu.
func (s *Store) openSamples(runID int64) (*sampleFile, error) {
	if sf, ok := s.files[runID]; ok {
		return sf, nil
	}
	if _, err := os.Stat(filepath.Join(s.runDir(runID), runFile)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(s.runDir(runID), samplesFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	end, err := validEnd(f)
	if err == nil {
		err = f.Truncate(end)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	if len(s.files) >= maxOpenSamples {
		for id, o := range s.files {
			o.f.Close()
			delete(s.files, id)
			break
		}
	}
	sf := &sampleFile{f: f, size: end}
	s.files[runID] = sf
	return sf, nil
}

// closeSamples closes a run's samples file: the run has ended.
func (s *Store) closeSamples(runID int64) {
	s.appMu.Lock()
	defer s.appMu.Unlock()
	if sf, ok := s.files[runID]; ok {
		sf.f.Close()
		delete(s.files, runID)
	}
}

// validEnd returns the offset after the last whole frame of f.
func validEnd(f *os.File) (int64, error) {
	r := frameReader{r: bufio.NewReader(io.NewSectionReader(f, 0, 1<<62))}
	for {
		_, ok, err := r.next()
		if err != nil {
			return 0, err
		}
		if !ok {
			return r.off, nil
		}
	}
}

// frameReader reads frames from r, counting the offset of the next one.
type frameReader struct {
	r   *bufio.Reader
	off int64
	buf []byte
}

// next returns the next frame's data (valid until the next call), false at
// the end: the end of the file, or a frame cut short or damaged.
func (fr *frameReader) next() ([]byte, bool, error) {
	var h [frameHeader]byte
	if _, err := io.ReadFull(fr.r, h[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, false, nil
		}
		return nil, false, err
	}
	n := binary.LittleEndian.Uint32(h[:])
	if n == 0 || n > maxFrame { // no sample is empty: zeros a crash left
		return nil, false, nil
	}
	if cap(fr.buf) < int(n) {
		fr.buf = make([]byte, n)
	}
	data := fr.buf[:n]
	if _, err := io.ReadFull(fr.r, data); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, false, nil
		}
		return nil, false, err
	}
	if crc32.Checksum(data, castagnoli) != binary.LittleEndian.Uint32(h[4:]) {
		return nil, false, nil
	}
	fr.off += frameHeader + int64(n)
	return data, true, nil
}

// Samples returns a run's samples in the order they were written;
// ErrNotFound when the run does not exist.
func (s *Store) Samples(id int64) ([]model.Record, error) {
	recs := []model.Record{}
	err := s.EachSample(id, func(r model.Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return recs, nil
}

// EachSample calls fn with each of a run's samples in the order they were
// written, decoding one at a time, so that a caller that keeps a bounded
// part of a long run (the live page's charts) never holds all of it. An
// error from fn stops the walk and is returned. ErrNotFound when the run
// does not exist. fn may read from and write to the store; a sample
// written while the walk goes may or may not be included.
func (s *Store) EachSample(id int64, fn func(model.Record) error) error {
	_, err := s.walkSamples(id, 0, -1, fn)
	return err
}

// walkSamples calls fn with up to limit samples (limit < 0: all) from
// offset off of run id's samples file, and returns the offset after the
// last one read.
func (s *Store) walkSamples(id, off int64, limit int, fn func(model.Record) error) (int64, error) {
	if _, err := s.Run(id); err != nil {
		return off, err
	}
	f, err := os.Open(filepath.Join(s.runDir(id), samplesFile))
	if errors.Is(err, fs.ErrNotExist) {
		return off, nil
	}
	if err != nil {
		return off, fmt.Errorf("store: samples of run %d: %w", id, err)
	}
	defer f.Close()
	fr := frameReader{r: bufio.NewReaderSize(io.NewSectionReader(f, off, 1<<62), 32<<10), off: off}
	for n := 0; limit < 0 || n < limit; n++ {
		b, ok, err := fr.next()
		if err != nil {
			return fr.off, fmt.Errorf("store: samples of run %d: %w", id, err)
		}
		if !ok {
			break
		}
		r, err := s.codec.decode(b)
		if err != nil {
			return fr.off, fmt.Errorf("store: samples of run %d: the sample at byte %d: %w", id, fr.off-frameHeader-int64(len(b)), err)
		}
		if err := fn(r); err != nil {
			return fr.off, err
		}
	}
	return fr.off, nil
}

// EachSampleChunk calls fn with a run's samples in the order they were
// written, at most size at a time. It holds the samples file open only
// while it reads a chunk, not while fn runs, so fn may take long (write
// to a slow HTTP client) or read the store itself; the slice is reused
// between calls. A sample written while the walk goes is included when
// its chunk is read. ErrNotFound when the run does not exist.
func (s *Store) EachSampleChunk(id int64, size int, fn func([]model.Record) error) error {
	size = max(size, 1)
	chunk := make([]model.Record, 0, size)
	var off int64
	for {
		chunk = chunk[:0]
		var err error
		off, err = s.walkSamples(id, off, size, func(r model.Record) error {
			chunk = append(chunk, r)
			return nil
		})
		if err != nil {
			return err
		}
		if len(chunk) == 0 {
			return nil
		}
		if err := fn(chunk); err != nil {
			return err
		}
		if len(chunk) < size {
			return nil
		}
	}
}
