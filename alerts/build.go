package alerts

import (
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/field"
)

// BuildOptions are Build's dependencies.
type BuildOptions struct {
	// Logger is passed to sinks that log; nil means none.
	Logger *zap.Logger
	// Transport is the HTTP transport of the HTTP sinks; nil means
	// http.DefaultTransport.
	Transport http.RoundTripper
}

// Build validates c and returns its sinks by name. It reads secret files;
// its errors are field.Errors too.
func Build(c Config, opts BuildOptions) (map[string]Sink, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	sinks := make(map[string]Sink, len(c.Sinks))
	for i, sc := range c.Sinks {
		s, err := buildSink(sc, opts)
		if err != nil {
			return nil, field.Errorf(fmt.Sprintf("alerts.sinks[%d]", i), "%w", err)
		}
		sinks[sc.Name] = s
	}
	return sinks, nil
}

func buildSink(sc SinkConfig, opts BuildOptions) (Sink, error) {
	timeout := sc.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	st, err := sc.settings()
	if err != nil {
		return nil, err
	}
	return st.Build(sc.Name, HTTPOptions{
		Client:  &http.Client{Timeout: timeout, Transport: opts.Transport},
		Timeout: timeout,
		Logger:  opts.Logger,
	})
}
