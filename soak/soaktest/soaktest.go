// Package soaktest holds what soakd's tests share: waiting for a condition
// with a deadline instead of sleeping.
package soaktest

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds, and fails the test when it does not
// within timeout; what names the condition in the failure.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
