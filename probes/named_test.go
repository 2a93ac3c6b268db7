package probes

import "testing"

// Named reads the kinds table: every kind with a field names itself and
// its value, and the default (the URL's port) names nothing.
func TestSpecNamed(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{PID: 1234}, "pid 1234"},
		{Spec{PIDFile: "/run/nginx.pid"}, "pidfile /run/nginx.pid"},
		{Spec{Match: "nginx: master"}, "match nginx: master"},
		{Spec{Unit: "nginx.service"}, "unit nginx.service"},
		{Spec{Exec: "./server --port 8080"}, "exec ./server --port 8080"},
		{Spec{URL: "http://127.0.0.1:8080/"}, ""},
	} {
		if got := tc.spec.Named(); got != tc.want {
			t.Errorf("%+v: Named() = %q; want %q", tc.spec, got, tc.want)
		}
	}
	for _, k := range Kinds() {
		if k.Field == nil {
			continue
		}
		var s Spec
		switch v := k.Field(&s).(type) {
		case *int:
			*v = 7
		case *string:
			*v = "x"
		}
		if got := s.Named(); got == "" || got[:len(k.Name)] != k.Name {
			t.Errorf("kind %s: Named() = %q; want it to start with the kind's name", k.Name, got)
		}
	}
}
