package demo

import (
	"fmt"
	"os"
	"sync"
	"syscall"
)

// Arena hands out memory outside the Go heap, from anonymous mappings, and
// touches every page it hands out. Memory taken from it is never returned,
// so RSS grows by exactly what was taken (to the page), with no GC sawtooth
// on top: a C server's malloc leak, in effect.
type Arena struct {
	mu    sync.Mutex // guards the fields below
	chunk []byte
	off   int
	total uint64
}

const arenaChunk = 256 << 20 // reserved per mapping; pages are only backed when touched

// Take leaks n bytes: it advances the arena by n and writes to every page
// that the advance reaches, so the kernel must back them.
func (a *Arena) Take(n int) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for n > 0 {
		if a.chunk == nil || a.off >= len(a.chunk) {
			b, err := syscall.Mmap(-1, 0, arenaChunk, syscall.PROT_READ|syscall.PROT_WRITE,
				syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
			if err != nil {
				return fmt.Errorf("demo: mmap %d bytes: %w", arenaChunk, err)
			}
			a.chunk, a.off = b, 0
		}
		step := min(n, len(a.chunk)-a.off)
		// Touch the first byte of the range and of every page it reaches.
		a.chunk[a.off] = 1
		page := os.Getpagesize()
		for p := (a.off/page + 1) * page; p < a.off+step; p += page {
			a.chunk[p] = 1
		}
		a.off += step
		a.total += uint64(step)
		n -= step
	}
	return nil
}

// Leaked reports the bytes taken so far.
func (a *Arena) Leaked() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.total
}
