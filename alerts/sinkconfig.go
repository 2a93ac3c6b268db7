package alerts

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/soakd/soakd/soak/field"
	"github.com/soakd/soakd/soak/urlx"
)

// SinkConfig configures one sink: its name and type, the settings every
// type shares, and the type's own settings. In YAML the type's fields sit
// beside name and type: {name: hook, type: webhook, url: ...}.
type SinkConfig struct {
	Name string `yaml:"name"`
	// Type names the sink type: a key of the registry (SinkTypes).
	Type string `yaml:"type"`
	// Timeout bounds one send; zero means DefaultTimeout.
	Timeout time.Duration `yaml:"timeout"`
	// RepeatInterval is how often this sink is notified again of an
	// alert still firing, when it pages people (webhook, Slack, exec);
	// zero means the alerts' repeat_interval (Config.RepeatInterval).
	RepeatInterval time.Duration `yaml:"repeat_interval"`
	// Settings are the type's own: *AlertmanagerConfig, *WebhookConfig,
	// *SlackConfig or *ExecConfig, decoded from the sink's other keys.
	Settings SinkSettings `yaml:"-"`
}

// SinkSettings are one sink type's own settings. Each type's struct
// checks itself and builds its sink; no type knows another's fields.
type SinkSettings interface {
	// Validate adds the problems of the settings to es, at path's
	// fields (path is the sink's, e.g. "alerts.sinks[1]").
	Validate(path string, es *field.Errors)
	// Build returns the sink named name; it may read files.
	Build(name string, ho HTTPOptions) (Sink, error)
}

// dirSetter is implemented by settings that name files: relative paths
// are taken relative to dir.
type dirSetter interface{ setDirectory(dir string) }

// sinkType is one entry of the registry: a type's name and its settings.
type sinkType struct {
	name string
	new  func() SinkSettings
}

// sinkTypes is the registry of sink types, in the order messages list
// them. A new sink type is a file with its settings and its sink, and one
// entry here.
var sinkTypes = []sinkType{
	{TypeAlertmanager, func() SinkSettings { return &AlertmanagerConfig{} }},
	{TypeWebhook, func() SinkSettings { return &WebhookConfig{} }},
	{TypeSlack, func() SinkSettings { return &SlackConfig{} }},
	{TypeExec, func() SinkSettings { return &ExecConfig{} }},
}

// SinkTypes lists the registered sink types' names.
func SinkTypes() []string {
	names := make([]string, len(sinkTypes))
	for i, t := range sinkTypes {
		names[i] = t.name
	}
	return names
}

func lookupType(name string) (sinkType, bool) {
	for _, t := range sinkTypes {
		if t.name == name {
			return t, true
		}
	}
	return sinkType{}, false
}

// typeList words the types for a message: "alertmanager, webhook, slack or exec".
func typeList() string {
	n := SinkTypes()
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// VariantKey is the YAML key that picks the type of a sink's other keys;
// with VariantType it lets a config checker walk a sink by its type.
func (SinkConfig) VariantKey() string { return "type" }

// VariantType returns the Go type of the settings of a sink of type typ,
// or nil when typ is not registered.
func (SinkConfig) VariantType(typ string) reflect.Type {
	t, ok := lookupType(typ)
	if !ok {
		return nil
	}
	return reflect.TypeOf(t.new()).Elem()
}

// commonKeys are the YAML keys of SinkConfig itself.
var commonKeys = map[string]bool{"name": true, "type": true, "timeout": true, "repeat_interval": true}

// UnmarshalYAML decodes name, type, timeout and repeat_interval, then the other keys into
// the registered type's settings, strictly: a key the type does not have
// is an error. An unknown type keeps no settings; Validate reports it.
func (s *SinkConfig) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a sink is a mapping with name, type and the type's fields", n.Line)
	}
	common, rest := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}, &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(n.Content); i += 2 {
		to := rest
		if commonKeys[n.Content[i].Value] {
			to = common
		}
		to.Content = append(to.Content, n.Content[i], n.Content[i+1])
	}
	type plain SinkConfig // without this method
	if err := common.Decode((*plain)(s)); err != nil {
		return err
	}
	t, ok := lookupType(s.Type)
	if !ok {
		return nil
	}
	s.Settings = t.new()
	if err := knownKeys(rest, reflect.TypeOf(s.Settings).Elem(), s.Type); err != nil {
		return err
	}
	return rest.Decode(s.Settings)
}

// knownKeys fails on a key of n that is not a yaml field of t.
func knownKeys(n *yaml.Node, t reflect.Type, typ string) error {
	known := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		known[name] = true
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !known[k.Value] {
			return fmt.Errorf("line %d: field %s not found in a sink of type %s", k.Line, k.Value, typ)
		}
	}
	return nil
}

var sinkNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// validate adds the sink's problems to es at p's fields.
func (s SinkConfig) validate(p string, es *field.Errors) {
	if s.Name == "" {
		es.Add(p+".name", "required")
	} else if !sinkNameRE.MatchString(s.Name) {
		es.Add(p+".name", "%q: use letters, digits, '_', '.', '-'", s.Name)
	}
	if s.Timeout < 0 {
		es.Add(p+".timeout", "must be >= 0, got %s", s.Timeout)
	}
	if s.RepeatInterval < 0 {
		es.Add(p+".repeat_interval", "must be >= 0 (0: the alerts' repeat_interval), got %s", s.RepeatInterval)
	}
	st, err := s.settings()
	if err != nil {
		es.Add(p+".type", "%v", err)
		return
	}
	st.Validate(p, es)
}

// settings returns the sink's settings, zero ones of its type when none
// were given (their required fields are then reported).
func (s SinkConfig) settings() (SinkSettings, error) {
	t, ok := lookupType(s.Type)
	switch {
	case s.Type == "":
		return nil, fmt.Errorf("required (%s)", typeList())
	case !ok:
		return nil, fmt.Errorf("unknown type %q (want %s)", s.Type, typeList())
	case s.Settings == nil:
		return t.new(), nil
	case reflect.TypeOf(s.Settings) != reflect.TypeOf(t.new()):
		return nil, fmt.Errorf("type %s but settings %T", s.Type, s.Settings)
	}
	return s.Settings, nil
}

// checkHTTPURL adds an error at path unless raw is an absolute http(s)
// URL by urlx's rule. The message shows the URL redacted.
func checkHTTPURL(es *field.Errors, path, raw string) {
	if _, err := urlx.Parse(raw, urlx.HTTP); err != nil {
		es.Add(path, "%v", err)
	}
}
