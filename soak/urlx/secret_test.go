package urlx_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"go.yaml.in/yaml/v3"

	"github.com/soakd/soakd/soak/urlx"
)

// A config-like struct holding secrets, as soakd's configs do.
type sinkLike struct {
	Name    string       `json:"name" yaml:"name"`
	Token   urlx.Secret  `json:"token" yaml:"token"`
	Headers urlx.Headers `json:"headers" yaml:"headers"`
}

const tok = "s3cr3t-t0ken-value"

// TestSecretNeverPrints prints a secret every way soakd prints a value
// (fmt's verbs, JSON, YAML, zap's fields and reflection) and looks for
// it; reading it back from YAML and JSON keeps the value.
func TestSecretNeverPrints(t *testing.T) {
	v := sinkLike{Name: "pager", Token: tok, Headers: urlx.Headers{"Authorization": "Bearer " + tok}}
	var shown []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		shown = append(shown, fmt.Sprintf(verb, v), fmt.Sprintf(verb, &v), fmt.Sprintf(verb, v.Token))
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	shown = append(shown, string(j), string(y))
	core, logs := observer.New(zapcore.DebugLevel)
	log := zap.New(core)
	log.Info("sink", zap.Any("sink", v), zap.Stringer("token", v.Token), zap.Any("headers", v.Headers), zap.Reflect("r", v))
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	for _, e := range logs.All() {
		b, err := enc.EncodeEntry(e.Entry, e.Context)
		if err != nil {
			t.Fatal(err)
		}
		shown = append(shown, b.String())
	}
	for _, s := range shown {
		if strings.Contains(s, tok) {
			t.Errorf("the secret shows: %s", s)
		}
	}
	if !strings.Contains(string(j), urlx.Mark) || !strings.Contains(string(y), urlx.Mark) {
		t.Errorf("want %s in place of the secret: %s / %s", urlx.Mark, j, y)
	}
	var back sinkLike
	if err := yaml.Unmarshal([]byte("name: pager\ntoken: "+tok+"\nheaders:\n  Authorization: Bearer "+tok+"\n"), &back); err != nil {
		t.Fatal(err)
	}
	if back.Token.Reveal() != tok || back.Headers["Authorization"].Reveal() != "Bearer "+tok {
		t.Errorf("YAML read %q, %q", back.Token.Reveal(), back.Headers["Authorization"].Reveal())
	}
	if err := json.Unmarshal([]byte(`{"token":"`+tok+`"}`), &back); err != nil || back.Token.Reveal() != tok {
		t.Errorf("JSON read %q (%v)", back.Token.Reveal(), err)
	}
	if (urlx.Secret("")).String() != "" || fmt.Sprint(urlx.Secret("")) != "" {
		t.Error("an unset secret prints as something")
	}
}
