package web

import (
	"bytes"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/verdict"
)

// TestRunReportCPUFigures renders a run whose CPU verdict carries the
// busiest thread, the capacity, the machine and a rising cost per request.
func TestRunReportCPUFigures(t *testing.T) {
	rep := loadRun(t, "testdata/run1")
	c := &rep.CPU
	c.Bound, c.Evidence = verdict.BoundCPU, verdict.EvidenceThread
	c.Reason = "cpu: thread 4711 (loop) on CPU 97 % of the time; user 90 % / system 10 %"
	c.Capacity, c.CapacitySource = 1.5, "cpu.max 1.5 cores (/system.slice/x.service); affinity 2 CPUs"
	c.HotThread = &verdict.HotThread{PID: 4710, TID: 4711, Name: "loop" + evil, CPU: 0.97, Wait: 0.02, Readings: 9}
	c.HotProcess = &verdict.HotProcess{PID: 4710, Name: "server", Cores: 1.02}
	c.HostUtilization, c.HostCPUs = 1.7, 2
	c.Cost = verdict.CostDrift{Windows: 12, Start: 50e-6, End: 400e-6, Change: 7, Rising: true,
		Reason: "CPU per request rising: 50 µs to 400 µs (+700 %) over the soak"}
	var b bytes.Buffer
	if err := RunReport(&b, rep, PageOptions{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<th scope="row">Evidence</th><td>thread</td>`,
		`<th scope="row">Capacity</th><td class="num">1.50 cores</td><td>cpu.max 1.5 cores (/system.slice/x.service); affinity 2 CPUs</td>`,
		`<td class="num">97 % on CPU, 2 % waiting</td><td>thread 4711 (loop&lt;script&gt;`,
		`<th scope="row">Busiest process</th><td class="num">1.02 cores</td><td>pid 4710 (server)</td>`,
		`<th scope="row">Machine</th><td class="num">1.70 of 2 cores</td>`,
		`<th scope="row">cpu per request</th>`,
		`<td>CPU per request rising: 50 µs to 400 µs (&#43;700 %) over the soak</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, evilScript) {
		t.Errorf("the thread's name reached the page unescaped")
	}
}
