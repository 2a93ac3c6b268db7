package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Parse parses and validates a config file's content; path names the file
// in messages and anchors its relative paths.
func Parse(path string, data []byte) (*Config, error) {
	errs := newErrorList(path)
	doc, err := parseDocument(data)
	if err != nil {
		return nil, syntaxError(path, err, data)
	}
	if doc == nil {
		return nil, &Error{File: path, Msg: "empty file: want a mapping with listen, state_dir, jobs, ... (see configs/soakd.yaml)"}
	}
	w := newWalker(errs)
	w.check(doc, reflect.TypeOf(Config{}), "")
	if err := errs.err(); err != nil {
		return nil, err
	}
	cfg, err := decode(doc)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	cfg.Path = path
	v := validator{cfg: cfg, errs: errs}
	v.run()
	if err := errs.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// parseDocument returns the root node of the only document in data, or
// nil when data holds none.
func parseDocument(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("yaml: line %d: a second document: a config file holds one document (remove the ---)", extra.Line)
	}
	if len(root.Content) == 0 || isNull(root.Content[0]) {
		return nil, nil
	}
	return root.Content[0], nil
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError turns yaml's "yaml: line 3: msg" into "FILE:3: msg", on
// the line at fault (faultLine).
func syntaxError(file string, err error, data []byte) error {
	m := yamlLineRE.FindStringSubmatch(err.Error())
	if m == nil {
		return &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	line, _ := strconv.Atoi(m[1])
	return &Error{File: file, Line: faultLine(data, line, m[2]), Msg: m[2]}
}

// faultLine is the line of data at fault in a syntax error yaml placed at
// line. yaml places a parser error at the start of the block it was
// parsing, not at the token it choked on: a key indented one space too
// few on line 7 reads "line 2: did not find expected key" when the jobs
// list starts on line 2. A prefix of a YAML document that ends at a line
// break parses wherever the document does (blocks close at the end of
// the input), so the first line whose prefix fails to parse with the
// same message is the line at fault (a prefix that ends inside a flow
// list fails too, with another message). The search starts at yaml's
// line, which is never after it; yaml's own line stands when no prefix
// fails so (the fault is in how the document ends, e.g. a quote left
// open).
func faultLine(data []byte, line int, msg string) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	end := 0
	for i, l := range lines {
		end += len(l)
		if i+1 < line {
			continue
		}
		_, err := parseDocument(data[:end])
		if m := yamlLineRE.FindStringSubmatch(fmt.Sprint(err)); m != nil && m[2] == msg {
			return i + 1
		}
	}
	return line
}

// decode decodes a checked document over the defaults: Default for the
// file, DefaultJob for each job.
func decode(doc *yaml.Node) (*Config, error) {
	cfg := Default()
	if err := doc.Decode(&cfg); err != nil {
		return nil, err
	}
	cfg.Alerts.ApplyDefaults()
	jobs := mappingValue(doc, "jobs")
	if jobs == nil {
		return &cfg, nil
	}
	items := resolve(jobs).Content
	cfg.Jobs = make([]Job, len(items))
	for i, item := range items {
		cfg.Jobs[i] = DefaultJob()
		if err := item.Decode(&cfg.Jobs[i]); err != nil {
			return nil, err
		}
	}
	return &cfg, nil
}

// mappingValue returns the value of key in mapping n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	n = resolve(n)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// joinPath appends a field name to a path.
func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// walker checks a document against the Go types it decodes into: unknown
// or repeated fields, a list where a mapping belongs, a scalar that does
// not fit its field. It records each field's line for later messages.
type walker struct {
	errs   *errorList
	budget *int // nodes left to visit: aliases could expand exponentially
}

// maxNodes bounds the nodes a walk visits, aliases expanded.
const maxNodes = 100000

func newWalker(errs *errorList) walker {
	n := maxNodes
	return walker{errs: errs, budget: &n}
}

var durationType = reflect.TypeOf(time.Duration(0))

func (w walker) check(n *yaml.Node, t reflect.Type, path string) {
	if *w.budget--; *w.budget < 0 {
		if *w.budget == -1 {
			w.errs.add(path, "more than %d values once aliases are expanded: write the file out plainly", maxNodes)
		}
		return
	}
	n = resolve(n)
	if _, ok := w.errs.lines[path]; !ok {
		w.errs.lines[path] = n.Line
	}
	if isNull(n) {
		return
	}
	switch {
	case t == durationType:
		w.scalar(n, t, path)
	case t.Kind() == reflect.Struct:
		w.mapping(n, t, path)
	case t.Kind() == reflect.Slice:
		w.sequence(n, t, path)
	case t.Kind() == reflect.Map:
		w.stringMap(n, t, path)
	default:
		w.scalar(n, t, path)
	}
}

// variant is a struct whose other keys are the fields of a type that
// one of its keys picks: an alert sink's type.
type variant interface {
	VariantKey() string
	VariantType(key string) reflect.Type
}

// variantFields adds the fields of the type a variant's key picks; open
// is true when the key names no known type (the struct's own check says
// so), and other keys are then not judged.
func variantFields(n *yaml.Node, t reflect.Type, names []string, fields map[string]reflect.StructField) ([]string, bool) {
	v, ok := reflect.Zero(t).Interface().(variant)
	if !ok || n.Kind != yaml.MappingNode {
		return names, false
	}
	key := mappingValue(n, v.VariantKey())
	if key == nil {
		return names, true
	}
	vt := v.VariantType(key.Value)
	if vt == nil {
		return names, true
	}
	vn, vf := yamlFields(vt)
	maps.Copy(fields, vf)
	return append(names, vn...), false
}

func (w walker) mapping(n *yaml.Node, t reflect.Type, path string) {
	names, fields := yamlFields(t)
	names, open := variantFields(n, t, names, fields)
	if n.Kind != yaml.MappingNode {
		w.errs.add(path, "want a mapping with %s, got %s", strings.Join(names, ", "), describe(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f, ok := fields[k.Value]
		switch {
		case k.Tag == "!!merge":
			w.errs.at(k.Line, path, "merge keys (<<) are not supported: repeat the fields")
			continue
		case !ok && open:
			continue
		case !ok:
			w.errs.at(k.Line, path, "unknown field %q (%sallowed: %s)", k.Value, didYouMean(k.Value, names), strings.Join(names, ", "))
			continue
		}
		fp := joinPath(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			w.errs.at(k.Line, fp, "set twice (first on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		w.errs.lines[fp] = k.Line
		w.check(v, f.Type, fp)
	}
}

func (w walker) sequence(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.SequenceNode {
		w.errs.add(path, "want a list such as [a, b] or lines starting with \"- \", got %s", describe(n))
		return
	}
	for i, item := range n.Content {
		ip := fmt.Sprintf("%s[%d]", path, i)
		w.errs.lines[ip] = item.Line
		w.check(item, t.Elem(), ip)
	}
}

func (w walker) stringMap(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		w.errs.add(path, "want a mapping of names to values, got %s", describe(n))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		fp := joinPath(path, k.Value)
		w.errs.lines[fp] = k.Line
		w.check(v, t.Elem(), fp)
	}
}

func (w walker) scalar(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.ScalarNode {
		w.errs.add(path, "want %s, got %s", wantScalar(t), describe(n))
		return
	}
	if err := n.Decode(reflect.New(t).Interface()); err == nil {
		return
	}
	if isUint(t) {
		if v, err := strconv.ParseInt(n.Value, 0, 64); err == nil && v < 0 {
			w.errs.add(path, "must be >= 0, got %d", v)
			return
		}
	}
	w.errs.add(path, "%q: want %s", n.Value, wantScalar(t))
}

func isUint(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

func wantScalar(t reflect.Type) string {
	if t == durationType {
		return "a duration such as 90s, 30m or 2h (no d: write 24h)"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	}
	if isUint(t) {
		return "a whole number >= 0"
	}
	return t.String()
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

// yamlFields lists the yaml names of t's fields, in order, and maps them to
// the fields.
func yamlFields(t reflect.Type) ([]string, map[string]reflect.StructField) {
	var names []string
	fields := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if opts == "inline" && f.Type.Kind() == reflect.Struct {
			inNames, inFields := yamlFields(f.Type)
			names = append(names, inNames...)
			maps.Copy(fields, inFields)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		names = append(names, name)
		fields[name] = f
	}
	return names, fields
}

// didYouMean suggests the allowed name closest to a misspelt one.
func didYouMean(name string, allowed []string) string {
	best, bestD := "", 3
	for _, a := range allowed {
		if d := editDistance(name, a); d < bestD {
			best, bestD = a, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("did you mean %q? ", best)
}

// editDistance is the Levenshtein distance of two short strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
