package reviewcmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/policy/casefile"
	"github.com/vapkit/vapkit/policy/manifest"
)

// expectationKind is the kind of expectation documents.
var expectationKind = schema.GroupVersionKind{Group: "vapkit.dev", Version: "v1alpha1", Kind: "Expectation"}

// expectation is one parsed Expectation document: what a case must produce.
// The *Line fields locate the checks in the file, for failure reports.
type expectation struct {
	skip       string // non-empty: do not run the case
	allow      bool   // the request must be admitted
	allowLine  int
	deny       *denyExpectation // non-nil: the request must be rejected
	warnings   []matcher        // checked only when hasWarns
	hasWarns   bool
	warnsLine  int
	auditAnnos []annotationExpectation // sorted by key
	// object, objectContains and patch are the checked YAML nodes of
	// those fields; nil when absent (objectexpect.go).
	object, objectContains, patch *yaml.Node
	objectLine, patchLine         int
	// fixedLine, when not 0, is the line every object check reports: the
	// nodes were rebuilt from decoded data and their own lines mean
	// nothing.
	fixedLine int
}

// denyExpectation constrains a rejection.
type denyExpectation struct {
	line    int
	message *matcher // nil: not checked
	code    *int32   // nil: not checked
	codeAt  int
	reason  *string // nil: not checked
	reasAt  int
}

// annotationExpectation is one expected audit annotation.
type annotationExpectation struct {
	key   string
	value matcher
}

// matchKind is how a matcher compares text.
type matchKind int

const (
	matchExact matchKind = iota
	matchContains
	matchRegexp
)

// matcher tests one text: equality, a substring or a regular expression.
type matcher struct {
	line int
	kind matchKind
	text string
	re   *regexp.Regexp
}

// match reports whether s satisfies m.
func (m matcher) match(s string) bool {
	switch m.kind {
	case matchContains:
		return strings.Contains(s, m.text)
	case matchRegexp:
		return m.re.MatchString(s)
	}
	return s == m.text
}

// String describes what m accepts.
func (m matcher) String() string {
	switch m.kind {
	case matchContains:
		return "text containing " + strconv.Quote(m.text)
	case matchRegexp:
		return "text matching /" + m.text + "/"
	}
	return strconv.Quote(m.text)
}

// mismatch is one failed check of an expectation, located in its file.
type mismatch struct {
	line      int
	path      string
	want, got string
	// diff is the line diff of want and got, for multi-line values; ""
	// shows want and got on a line each.
	diff string
}

// failure converts m into a failure of the expectation in file.
func (m mismatch) failure(file string) failure {
	diff := m.diff
	if diff == "" {
		diff = "- " + m.want + "\n+ " + m.got
	}
	return failure{Location: fmt.Sprintf("%s:%d", file, m.line), Field: m.path, Want: m.want, Got: m.got, Diff: diff}
}

// check compares the projection of a response, and what the decision made
// of the request's object, with e and returns every failed check, in the
// order of the fields of the format.
func (e *expectation) check(got casefile.Comparable, m *mutated) []mismatch {
	var out []mismatch
	add := func(line int, path, want, got string) {
		out = append(out, mismatch{line: line, path: path, want: want, got: got})
	}
	switch {
	case e.allow && !got.Allowed:
		add(e.allowLine, "allow", "allowed", fmt.Sprintf("denied: %d %s: %q", got.Code, got.Reason, got.Message))
	case e.deny != nil && got.Allowed:
		add(e.deny.line, "deny", "denied", "allowed")
	case e.deny != nil:
		d := e.deny
		if d.message != nil && !d.message.match(got.Message) {
			add(d.message.line, "deny.message", d.message.String(), strconv.Quote(got.Message))
		}
		if d.code != nil && *d.code != got.Code {
			add(d.codeAt, "deny.code", strconv.Itoa(int(*d.code)), strconv.Itoa(int(got.Code)))
		}
		if d.reason != nil && *d.reason != got.Reason {
			add(d.reasAt, "deny.reason", strconv.Quote(*d.reason), strconv.Quote(got.Reason))
		}
	}
	if e.hasWarns {
		for i := range max(len(e.warnings), len(got.Warnings)) {
			path := fmt.Sprintf("warnings[%d]", i)
			switch {
			case i >= len(got.Warnings):
				add(e.warnings[i].line, path, e.warnings[i].String(), "no such warning")
			case i >= len(e.warnings):
				add(e.warnsLine, path, "no warning", strconv.Quote(got.Warnings[i]))
			case !e.warnings[i].match(got.Warnings[i]):
				add(e.warnings[i].line, path, e.warnings[i].String(), strconv.Quote(got.Warnings[i]))
			}
		}
	}
	for _, a := range e.auditAnnos {
		path := "auditAnnotations[" + strconv.Quote(a.key) + "]"
		v, ok := got.AuditAnnotations[a.key]
		switch {
		case !ok:
			add(a.value.line, path, a.value.String(), "no such annotation")
		case !a.value.match(v):
			add(a.value.line, path, a.value.String(), strconv.Quote(v))
		}
	}
	return e.checkMutated(m, out)
}

// docError builds the located error of an expectation document.
func docError(file string, line, doc int, name, path, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	return &manifest.Error{File: file, Line: line, Document: doc, Kind: expectationKind.Kind, Name: name, Path: path, Err: errors.New(msg)}
}

// expectationParser reads one Expectation document from its YAML node.
type expectationParser struct {
	file string
	doc  int
	name string
	// docLine is the line where the document starts.
	docLine int
	// fixedLines is set when the node was rebuilt from decoded data and
	// its own lines mean nothing; docLine is reported instead.
	fixedLines bool
	// embedded is the path of an expectation inside a suite
	// ("tests[2].expect"), which has no apiVersion, kind or metadata; ""
	// for an Expectation document.
	embedded string
}

func (p *expectationParser) lineOf(n *yaml.Node) int {
	if p.fixedLines || n == nil {
		return p.docLine
	}
	return n.Line
}

func (p *expectationParser) errf(n *yaml.Node, path, format string, args ...any) error {
	if p.embedded != "" {
		return fmt.Errorf("%s:%d: %s: %s", p.file, p.lineOf(n), join(p.embedded, path), fmt.Sprintf(format, args...))
	}
	return docError(p.file, p.lineOf(n), p.doc, p.name, path, format, args...)
}

// resolve follows YAML aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for depth := 0; n != nil && n.Kind == yaml.AliasNode && depth < 100; depth++ {
		n = n.Alias
	}
	return n
}

// fields returns the members of a mapping node in order, rejecting
// duplicate and non-string keys.
func (p *expectationParser) fields(n *yaml.Node, path string) ([][2]*yaml.Node, error) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, p.errf(n, path, "expected a mapping, got %s", describe(n))
	}
	seen := map[string]bool{}
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			return nil, p.errf(n.Content[i], path, "expected string keys, got %s", describe(k))
		}
		if seen[k.Value] {
			return nil, p.errf(k, join(path, k.Value), "duplicate field")
		}
		seen[k.Value] = true
		out = append(out, [2]*yaml.Node{k, v})
	}
	return out, nil
}

// describe names the YAML type of n for error messages.
func describe(n *yaml.Node) string {
	n = resolve(n)
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null":
		return "null"
	case n.Kind == yaml.ScalarNode:
		return strings.TrimPrefix(n.ShortTag(), "!!") + " " + strconv.Quote(n.Value)
	}
	return "an unsupported node"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (p *expectationParser) str(n *yaml.Node, path string) (string, error) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return "", p.errf(n, path, "expected a string, got %s", describe(n))
	}
	return n.Value, nil
}

func (p *expectationParser) boolean(n *yaml.Node, path string) (bool, error) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		return false, p.errf(n, path, "expected true or false, got %s", describe(n))
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		return false, p.errf(n, path, "expected true or false, got %s", describe(n))
	}
	return b, nil
}

// matcher reads a text expectation: a string (exact), or a mapping with
// exactly one of exact, contains and regexp.
func (p *expectationParser) matcher(n *yaml.Node, path string) (matcher, error) {
	r := resolve(n)
	if r != nil && r.Kind == yaml.ScalarNode {
		s, err := p.str(r, path)
		return matcher{line: p.lineOf(r), kind: matchExact, text: s}, err
	}
	if r == nil || r.Kind != yaml.MappingNode {
		return matcher{}, p.errf(n, path, "expected a string or a mapping with one of exact, contains, regexp; got %s", describe(n))
	}
	fs, err := p.fields(r, path)
	if err != nil {
		return matcher{}, err
	}
	if len(fs) != 1 {
		return matcher{}, p.errf(n, path, "want exactly one of exact, contains, regexp; got %d fields", len(fs))
	}
	k, v := fs[0][0], fs[0][1]
	m := matcher{line: p.lineOf(k)}
	switch k.Value {
	case "exact":
		m.kind = matchExact
	case "contains":
		m.kind = matchContains
	case "regexp":
		m.kind = matchRegexp
	default:
		return matcher{}, p.errf(k, join(path, k.Value), "unknown field; want one of exact, contains, regexp")
	}
	if m.text, err = p.str(v, join(path, k.Value)); err != nil {
		return matcher{}, err
	}
	if m.kind == matchRegexp {
		if m.re, err = regexp.Compile(m.text); err != nil {
			return matcher{}, p.errf(v, join(path, k.Value), "%v", err)
		}
	}
	return m, nil
}

// parse reads the document node n (the mapping of one document).
func (p *expectationParser) parse(n *yaml.Node) (*expectation, error) {
	fs, err := p.fields(n, "")
	if err != nil {
		return nil, err
	}
	e := &expectation{}
	if p.fixedLines {
		e.fixedLine = p.docLine
	}
	var allowSet, denySet bool
	var apiVersion, kind string
	for _, f := range fs {
		k, v := f[0], f[1]
		if p.embedded != "" && (k.Value == "apiVersion" || k.Value == "kind" || k.Value == "metadata") {
			return nil, p.errf(k, k.Value, "unknown field; want %s", strings.Join(expectFields, ", "))
		}
		switch k.Value {
		case "apiVersion":
			apiVersion, err = p.str(v, k.Value)
		case "kind":
			kind, err = p.str(v, k.Value)
		case "metadata":
			_, err = p.fields(v, k.Value) // only the name is used, read below
		case "skip":
			e.skip, err = p.str(v, k.Value)
			if err == nil && strings.TrimSpace(e.skip) == "" {
				err = p.errf(v, k.Value, "give the reason for skipping")
			}
		case "allow":
			allowSet, e.allowLine = true, p.lineOf(k)
			e.allow, err = p.boolean(v, k.Value)
			if err == nil && !e.allow {
				err = p.errf(v, k.Value, "must be true; write deny to expect a rejection")
			}
		case "deny":
			denySet = true
			e.deny, err = p.denial(v)
		case "warnings":
			e.hasWarns, e.warnsLine = true, p.lineOf(k)
			e.warnings, err = p.warnings(v)
		case "auditAnnotations":
			e.auditAnnos, err = p.annotations(v)
		case "object":
			e.objectLine = p.lineOf(k)
			e.object, err = p.objectNode(v, k.Value, true)
		case "objectContains":
			e.objectContains, err = p.objectNode(v, k.Value, false)
		case "patch":
			e.patchLine = p.lineOf(k)
			e.patch, err = p.patchNode(v)
		default:
			err = p.errf(k, k.Value, "unknown field; want apiVersion, kind, metadata, allow, deny, warnings, auditAnnotations, object, objectContains, patch or skip")
		}
		if err != nil {
			return nil, err
		}
	}
	if gv := expectationKind.GroupVersion().String(); p.embedded == "" && (apiVersion != gv || kind != expectationKind.Kind) {
		return nil, p.errf(n, "", "an expectation must have apiVersion %s and kind %s, got %q and %q", gv, expectationKind.Kind, apiVersion, kind)
	}
	switch {
	case allowSet && denySet:
		return nil, p.errf(n, "", "allow and deny are exclusive")
	case !allowSet && !denySet && e.skip == "":
		return nil, p.errf(n, "", "an expectation needs allow, deny or skip")
	}
	return e, nil
}

// denial reads deny: true, or a mapping of message, code and reason.
func (p *expectationParser) denial(n *yaml.Node) (*denyExpectation, error) {
	r := resolve(n)
	d := &denyExpectation{line: p.lineOf(r)}
	if r != nil && r.Kind == yaml.ScalarNode {
		b, err := p.boolean(r, "deny")
		if err == nil && !b {
			err = p.errf(r, "deny", "must be true or a mapping; write allow to expect admission")
		}
		return d, err
	}
	fs, err := p.fields(n, "deny")
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		k, v := f[0], f[1]
		path := join("deny", k.Value)
		switch k.Value {
		case "message":
			var m matcher
			m, err = p.matcher(v, path)
			d.message = &m
		case "code":
			rv := resolve(v)
			if rv == nil || rv.Kind != yaml.ScalarNode || rv.ShortTag() != "!!int" {
				err = p.errf(v, path, "expected an HTTP status code, got %s", describe(v))
				break
			}
			c, cerr := strconv.ParseInt(rv.Value, 10, 32)
			if cerr != nil || c < 100 || c > 599 {
				err = p.errf(v, path, "expected an HTTP status code, got %s", describe(v))
				break
			}
			code := int32(c)
			d.code, d.codeAt = &code, p.lineOf(k)
		case "reason":
			var s string
			s, err = p.str(v, path)
			d.reason, d.reasAt = &s, p.lineOf(k)
		default:
			err = p.errf(k, path, "unknown field; want message, code or reason")
		}
		if err != nil {
			return nil, err
		}
	}
	return d, nil
}

func (p *expectationParser) warnings(n *yaml.Node) ([]matcher, error) {
	r := resolve(n)
	if r == nil || r.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "warnings", "expected a list, got %s", describe(n))
	}
	out := []matcher{}
	for i, item := range r.Content {
		m, err := p.matcher(item, fmt.Sprintf("warnings[%d]", i))
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func (p *expectationParser) annotations(n *yaml.Node) ([]annotationExpectation, error) {
	fs, err := p.fields(n, "auditAnnotations")
	if err != nil {
		return nil, err
	}
	out := make([]annotationExpectation, 0, len(fs))
	for _, f := range fs {
		m, err := p.matcher(f[1], "auditAnnotations["+strconv.Quote(f[0].Value)+"]")
		if err != nil {
			return nil, err
		}
		out = append(out, annotationExpectation{key: f[0].Value, value: m})
	}
	slices.SortFunc(out, func(a, b annotationExpectation) int { return strings.Compare(a.key, b.key) })
	return out, nil
}

// yamlDocuments parses data as a YAML stream and returns the content node
// of every non-empty document.
func yamlDocuments(data []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var out []*yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(doc.Content) > 0 {
			out = append(out, doc.Content[0])
		}
	}
}

// inlineExpectation returns the Expectation document of a case file, or nil
// when it has none. docs are the file's documents as manifest.Decode read
// them; data is the file's text.
func inlineExpectation(file string, data []byte, docs []manifest.Document) (*expectation, error) {
	var found *manifest.Document
	for i := range docs {
		if docs[i].Object.GetObjectKind().GroupVersionKind() != expectationKind {
			continue
		}
		if found != nil {
			return nil, docError(file, docs[i].Line, docs[i].Index, nameOf(&docs[i]), "", "a second Expectation; a case has at most one (the first is document %d)", found.Index)
		}
		found = &docs[i]
	}
	if found == nil {
		return nil, nil
	}
	return parseExpectationDoc(file, data, found)
}

func nameOf(d *manifest.Document) string {
	if u, ok := d.Object.(*unstructured.Unstructured); ok {
		return u.GetName()
	}
	return ""
}

// parseExpectationDoc parses the expectation document d of file, locating
// its fields through the YAML text when possible.
func parseExpectationDoc(file string, data []byte, d *manifest.Document) (*expectation, error) {
	p := &expectationParser{file: file, doc: d.Index, name: nameOf(d), docLine: d.Line}
	if d.Item == 0 {
		if nodes, err := yamlDocuments(data); err == nil {
			for _, n := range nodes {
				if n.Line == d.Line && n.Kind == yaml.MappingNode {
					return p.parse(n)
				}
			}
		}
	}
	// The text could not be matched to the document (a List item, or YAML
	// the stricter parser rejects): parse the decoded object and report the
	// document's line.
	u, ok := d.Object.(*unstructured.Unstructured)
	if !ok {
		return nil, docError(file, d.Line, d.Index, "", "", "unexpected object %T", d.Object)
	}
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return nil, docError(file, d.Line, d.Index, p.name, "", "%v", err)
	}
	var n yaml.Node
	if err := yaml.Unmarshal(raw, &n); err != nil || len(n.Content) == 0 {
		return nil, docError(file, d.Line, d.Index, p.name, "", "cannot read the document: %v", err)
	}
	p.fixedLines = true
	return p.parse(n.Content[0])
}

// parseExpectationFile parses a NAME.expect.yaml file: exactly one
// Expectation document.
func parseExpectationFile(file string, data []byte) (*expectation, error) {
	docs, err := manifest.Decode(data, file)
	if err != nil {
		return nil, err
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("%s: an expectation file holds exactly one Expectation document, found %d documents", file, len(docs))
	}
	if gvk := docs[0].Object.GetObjectKind().GroupVersionKind(); gvk != expectationKind {
		return nil, docError(file, docs[0].Line, docs[0].Index, "", "", "expected apiVersion %s and kind %s, got %s", expectationKind.GroupVersion(), expectationKind.Kind, describeGVK(gvk))
	}
	return parseExpectationDoc(file, data, &docs[0])
}

func describeGVK(gvk schema.GroupVersionKind) string {
	return strings.TrimPrefix(gvk.GroupVersion().String()+" "+gvk.Kind, " ")
}
