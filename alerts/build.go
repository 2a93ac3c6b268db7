package alerts

import (
	"bytes"
	"fmt"
	"net/http"
	"os"

	"go.uber.org/zap"
)

// BuildOptions are Build's dependencies.
type BuildOptions struct {
	// Logger is passed to sinks that log; nil means none.
	Logger *zap.Logger
	// Transport is the HTTP transport of the HTTP sinks; nil means
	// http.DefaultTransport.
	Transport http.RoundTripper
}

// Build validates c and returns its sinks by name. It reads secret files.
func Build(c Config, opts BuildOptions) (map[string]Sink, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	sinks := make(map[string]Sink, len(c.Sinks))
	for i, sc := range c.Sinks {
		s, err := buildSink(sc, opts)
		if err != nil {
			return nil, fmt.Errorf("alerts.sinks[%d]: %w", i, err)
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
	ho := HTTPOptions{
		Client:  &http.Client{Timeout: timeout, Transport: opts.Transport},
		Headers: sc.Headers,
		Logger:  opts.Logger,
	}
	switch sc.Type {
	case TypeAlertmanager:
		return NewAlertmanager(sc.Name, sc.URLs, ho)
	case TypeWebhook:
		secret, err := sc.secret()
		if err != nil {
			return nil, err
		}
		return NewWebhook(sc.Name, sc.URL, secret, ho), nil
	case TypeSlack:
		return NewSlack(sc.Name, sc.URL, ho), nil
	case TypeExec:
		return NewExec(sc.Name, sc.Command, timeout)
	}
	return nil, fmt.Errorf("unknown type %q", sc.Type)
}

func (sc SinkConfig) secret() ([]byte, error) {
	if sc.SecretFile == "" {
		return []byte(sc.Secret), nil
	}
	b, err := os.ReadFile(sc.SecretFile)
	if err != nil {
		return nil, fmt.Errorf("secret_file: %w", err)
	}
	b = bytes.TrimRight(b, "\r\n")
	if len(b) == 0 {
		return nil, fmt.Errorf("secret_file %s: empty", sc.SecretFile)
	}
	return b, nil
}
