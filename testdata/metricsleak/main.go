// Command metricsleak is the remote-probe tests' server: it serves / and
// leaks --leak-bytes per request there, outside the Go heap and touched so
// that it is resident (RSS grows by exactly that, with no GC sawtooth),
// and exposes /metrics with client_golang's process and Go collectors, as
// any instrumented service does. soakd sees it only through /metrics (or
// a Prometheus that scrapes it), never through /proc.
//
// It writes HOST:PORT to --port-file once listening, exits on SIGTERM or
// SIGINT, and after --max-lifetime whatever happens.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/soakd/soakd/soak/demo"
)

func main() { os.Exit(run()) }

func run() int {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on (loopback)")
	portFile := flag.String("port-file", "", "write HOST:PORT here once listening")
	leakBytes := flag.Int("leak-bytes", 0, "bytes leaked per request to /")
	lifetime := flag.Duration("max-lifetime", 5*time.Minute, "exit after this long")
	flag.Parse()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	var a demo.Arena
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		if err := a.Take(*leakBytes); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if *portFile != "" {
		if err := os.WriteFile(*portFile, []byte(ln.Addr().String()+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *lifetime)
	defer cancel()
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
