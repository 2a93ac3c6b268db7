// Package model is the data model of a run, shared by everything that makes,
// stores or shows one: a sample joined with the load (Record), the table of
// resources the analysis fits (Resources), the outcome (Report), and the
// files they are written to (samples.csv, procs.csv, report.json,
// report.txt). It imports the probes and the verdict's types, and nothing
// that runs, stores or serves a run.
package model

import (
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/verdict"
)

// Record is one sample of a run: the target's process tree, joined with the
// load's progress at the moment it was taken.
type Record struct {
	probes.Sample
	// Elapsed is the time since the run started: since the first sample
	// of the baseline, or since the load started when there is none.
	Elapsed  float64       `json:"elapsed_seconds"`
	Phase    verdict.Phase `json:"phase"`
	Requests uint64        `json:"requests"` // cumulative completed requests
	Errors   uint64        `json:"errors"`
	// Rate is the throughput since the previous sample, requests per
	// second. P50 and P99 are the latency, in seconds, of the load's last
	// progress interval (1 s by default), which may span several samples.
	Rate float64 `json:"rate_rps"`
	P50  float64 `json:"p50_seconds"`
	P99  float64 `json:"p99_seconds"`
	// EndpointRequests are each endpoint's cumulative completed requests,
	// in the order of the targets file; nil with one endpoint.
	EndpointRequests []uint64 `json:"endpoint_requests,omitempty"`
	// FDsNet is FDs less the connections the load held open at the
	// sample (load.Engine.OpenConns). It is valid when FDs is and the
	// sampled tree serves every endpoint, so that each connection is one
	// of its fds: the fds verdict judges it, because an open loop that
	// meets a stall starts workers, each with a connection it keeps, and
	// those steps are the load's, not the target's.
	FDsNet      uint64 `json:"fds_net_of_load,omitempty"`
	FDsNetValid bool   `json:"fds_net_valid,omitempty"`
}

// TypicalRecord is a record shaped like a real one: a five-process tree at
// a typical cadence, with realistic magnitudes. The store builds its
// compression dictionary from its JSON.
func TypicalRecord() Record {
	members := make([]probes.Member, 5)
	top := make([]probes.ProcStat, len(members))
	for i := range members {
		members[i] = probes.Member{PID: 123456, Start: 12345678, PPID: 123456, Name: "server",
			RSS: 123456789, FDs: 1234, Threads: 12, CPU: 123.45}
		top[i] = members[i].Stat()
	}
	r := Record{
		Sample: probes.Sample{
			Time: time.Date(2026, 1, 1, 2, 3, 4, 567891234, time.UTC), Alive: true, RootPID: 123456, RootStart: 12345678,
			Incarnation: 1, Procs: 5, RSSValid: true, RSS: 123456789, VMS: 1234567890, Swap: 0, SmapsValid: true, PSS: 123456789, USS: 123456789,
			FDsValid: true, FDs: 123, FDLimit: 1048576, ThreadsValid: true, Threads: 12, CPUUser: 123.45, CPUSystem: 12.34,
			CtxVoluntary: 1234567, CtxInvol: 12345, IOValid: true, ReadBytes: 12345, WriteBytes: 12345,
			ReadChars: 123456789, WriteChars: 123456789, TCPValid: true, TCPEstablished: 1, TCPListen: 1,
			SelfUser: 12.34, SelfSystem: 1.23, SelfRSS: 12345678, Top: top, Members: members,
		},
		Elapsed: 1234.5, Phase: verdict.Soak, Requests: 1234567, Errors: 0, Rate: 1234.5, P50: 0.000123, P99: 0.001234,
		FDsNet: 121, FDsNetValid: true,
	}
	return r
}
