package analysis_test

import (
	"slices"
	"testing"

	"github.com/soakd/soakd/soak/analysis"
	"github.com/soakd/soakd/soak/load"
)

func TestEndpointNames(t *testing.T) {
	tests := []struct {
		name string
		eps  []load.EndpointCount
		want []string
	}{
		{"paths", []load.EndpointCount{{Method: "GET", URL: "http://h:1/s/scgi/"}, {Method: "POST", URL: "http://h:1/form?a=1"}},
			[]string{"GET /s/scgi/", "POST /form?a=1"}},
		{"same path on two hosts", []load.EndpointCount{{Method: "GET", URL: "http://a:1/x"}, {Method: "GET", URL: "http://b:1/x"}},
			[]string{"GET http://a:1/x", "GET http://b:1/x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := analysis.EndpointNames(tc.eps); !slices.Equal(got, tc.want) {
				t.Errorf("EndpointNames = %q; want %q", got, tc.want)
			}
		})
	}
	if got := analysis.OptionsEndpointNames([]load.Endpoint{{URL: "http://h:1/a"}, {Method: "HEAD", URL: "http://h:1/b"}}); !slices.Equal(got, []string{"GET /a", "HEAD /b"}) {
		t.Errorf("OptionsEndpointNames = %q; want GET /a, HEAD /b", got)
	}
}
