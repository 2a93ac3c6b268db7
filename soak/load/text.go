package load

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"
)

// NewProgress returns an OnInterval printer writing one line per interval:
//
//	[    5s] 33464 requests   6782.0 req/s (avg 6469.6 req/s)   p50 0.150 ms   p99 1.200 ms   errors 0
//
// "avg" is the exponential moving average of the rate (openload's MaTps).
// An interval in which no request completed while some wait says so:
//
//	[   10s] 0 requests   0.0 req/s (avg 0.0 req/s)   p50 0.000 ms   p99 0.000 ms   errors 0   1 in flight, waiting 10 s, 0 bytes received
//
// With total > 0 it also prints "N requests completed" each time another
// 10 % of total is reached, like ab's "Completed 100000 requests".
func NewProgress(w io.Writer, total uint64) func(Interval) {
	var start time.Time
	var nextTenth uint64 = 1
	return func(iv Interval) {
		if start.IsZero() {
			start = iv.Start
		}
		for total > 0 && nextTenth <= 10 && iv.Requests >= total*nextTenth/10 {
			fmt.Fprintf(w, "%d requests completed\n", total*nextTenth/10)
			nextTenth++
		}
		fmt.Fprintf(w, "[%6.0fs] %d requests   %.1f req/s (avg %.1f req/s)   p50 %.3f ms   p99 %.3f ms   errors %d%s\n",
			iv.End.Sub(start).Seconds(), iv.Requests, iv.Rate, iv.MovingRate,
			iv.P50*1e3, iv.P99*1e3, iv.Errors, waiting(iv))
	}
}

// waiting describes the requests in flight of an interval in which none
// completed: "   1 in flight, waiting 10 s, 0 bytes received".
func waiting(iv Interval) string {
	if iv.Count > 0 || iv.InFlight == 0 {
		return ""
	}
	return fmt.Sprintf("   %d in flight, waiting %.0f s, %d bytes received",
		iv.InFlight, iv.Waiting.Seconds(), iv.BytesIn)
}

// WriteText writes s as a report in the manner of ab and httperf.
func (s *Summary) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	s.writeTotals(bw)
	s.writeLatency(bw)
	s.writeErrors(bw)
	return bw.Flush()
}

func (s *Summary) writeTotals(w io.Writer) {
	mode := fmt.Sprintf("closed loop, %d %s", s.Concurrency, plural(s.Concurrency, "client", "clients"))
	if s.Mode == "open" {
		mode = fmt.Sprintf("open loop, %.1f req/s target, up to %d in flight", s.TargetRate, s.Concurrency)
	}
	ka := "on"
	if !s.KeepAlive {
		ka = "off"
	}
	fmt.Fprintf(w, "Mode:                   %s, keep-alive %s\n", mode, ka)
	fmt.Fprintf(w, "Stopped by:             %s\n", s.StoppedText())
	fmt.Fprintf(w, "Time taken:             %.3f s\n", s.DurationSeconds)
	fmt.Fprintf(w, "Complete requests:      %d\n", s.Requests)
	fmt.Fprintf(w, "Successful requests:    %d\n", s.Successes)
	fmt.Fprintf(w, "Failed requests:        %d\n", s.Errors)
	fmt.Fprintf(w, "Abandoned at stop:      %d\n", s.Abandoned)
	if s.AttemptsWhileGone > 0 {
		fmt.Fprintf(w, "While target gone:      %d (attempts, not counted above)\n", s.AttemptsWhileGone)
	}
	fmt.Fprintf(w, "Requests per second:    %.2f [#/sec] (mean)\n", s.RPS)
	fmt.Fprintf(w, "Connections opened:     %d\n", s.Connections)
	fmt.Fprintf(w, "Bytes received:         %d\n", s.BytesIn)
	fmt.Fprintf(w, "Bytes sent:             %d\n", s.BytesOut)
	if s.Mode == "open" {
		fmt.Fprintf(w, "Late sends:             %d (left > %v after their intended time)\n", s.LateSends, lateAfter)
		fmt.Fprintf(w, "Missed sends:           %d (never sent: backlog over the timeout, or the run ended)\n", s.MissedSends)
	}
}

func (s *Summary) writeLatency(w io.Writer) {
	l := s.Latency
	fmt.Fprintf(w, "\nLatency (ms)            min %.3f   mean %.3f   p50 %.3f   p90 %.3f   p99 %.3f   p99.9 %.3f   max %.3f\n",
		l.Min*1e3, l.Mean*1e3, l.P50*1e3, l.P90*1e3, l.P99*1e3, l.P999*1e3, l.Max*1e3)
	if s.Censored > 0 {
		fmt.Fprintf(w, "Latencies censored at the %s timeout: %d (counted at their measured time, at least the timeout)\n",
			secs(s.TimeoutSeconds), s.Censored)
	}
	if s.Unanswered > 0 {
		fmt.Fprintf(w, "Not latencies:          %d requests that failed without an answer before the timeout (refused, reset, TLS, …)\n", s.Unanswered)
	}
	if len(s.Percentiles) == 0 {
		return
	}
	fmt.Fprintf(w, "\nPercentage of the requests served within a certain time (ms)\n")
	for _, p := range s.Percentiles {
		suffix := ""
		if p.Percent == 100 {
			suffix = " (longest request)"
		}
		fmt.Fprintf(w, "  %5s%%  %10.3f%s\n", fmt.Sprintf("%g", p.Percent), p.Seconds*1e3, suffix)
	}
}

func (s *Summary) writeErrors(w io.Writer) {
	fmt.Fprintf(w, "\nStatus classes:        ")
	for _, k := range slices.Sorted(maps.Keys(s.StatusClasses)) {
		fmt.Fprintf(w, " %s %d", k, s.StatusClasses[k])
	}
	fmt.Fprintf(w, "\nErrors by cause:       ")
	if len(s.ErrorsByCause) == 0 {
		fmt.Fprintf(w, " none")
	}
	for _, c := range causes {
		if n, ok := s.ErrorsByCause[c]; ok {
			fmt.Fprintf(w, " %s %d", c, n)
		}
	}
	fmt.Fprintln(w)
	for _, c := range causes {
		for _, t := range s.ErrorTexts[c] {
			fmt.Fprintf(w, "  %-16s %8d  %s\n", c, t.Count, t.Text)
		}
	}
	s.writeEndpoints(w)
}

// writeEndpoints writes the per-endpoint table when there are several.
func (s *Summary) writeEndpoints(w io.Writer) {
	if len(s.Endpoints) < 2 {
		return
	}
	fmt.Fprintf(w, "\nRequests by endpoint:\n")
	for _, ep := range s.Endpoints {
		fmt.Fprintf(w, "  %10d requests  %8d errors  %s %s\n", ep.Requests, ep.Errors, ep.Method, ep.URL)
	}
}

// secs formats a number of seconds as a short duration: "10 s", "1.5 s",
// "250 ms".
func secs(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%g ms", s*1e3)
	}
	return fmt.Sprintf("%g s", s)
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
