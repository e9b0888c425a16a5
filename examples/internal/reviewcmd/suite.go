package reviewcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vapkit/vapkit/policy/manifest"
)

// suiteKind is the kind of suite files.
var suiteKind = schema.GroupVersionKind{Group: "vapkit.dev", Version: "v1alpha1", Kind: "Suite"}

// Suite is a suite file: the cluster, named once by files and globs, and
// the tests run against it. The yaml tags are the format (FORMAT.md);
// suite.schema.json describes the same fields and is tested against these
// types.
type Suite struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	// Policies, Bindings, Params, Namespaces, CRDs and Authorizer list
	// files or globs, relative to the suite file. Each file may hold any
	// objects; they are sorted by kind wherever they are listed.
	Policies   []string    `yaml:"policies"`
	Bindings   []string    `yaml:"bindings"`
	Params     []string    `yaml:"params"`
	Namespaces []string    `yaml:"namespaces"`
	CRDs       []string    `yaml:"crds"`
	Authorizer []string    `yaml:"authorizer"`
	Tests      []SuiteTest `yaml:"tests"`
}

// SuiteTest is one test of a suite: a request built from its objects, and the
// expected decision.
type SuiteTest struct {
	Name string `yaml:"name"`
	// Object and OldObject are inline objects or files holding one object.
	Object    *ObjectSource `yaml:"object"`
	OldObject *ObjectSource `yaml:"oldObject"`
	// Operation defaults from the objects: object alone CREATE, both
	// UPDATE, oldObject alone DELETE.
	Operation   string `yaml:"operation"`
	SubResource string `yaml:"subResource"`
	// Resource is the resource requested when the object's kind is not
	// the resource's own: subresources (a Scale sent to
	// deployments/scale) and CONNECT.
	Resource  *GroupVersionResource `yaml:"resource"`
	Namespace string                `yaml:"namespace"`
	UserInfo  *UserInfo             `yaml:"userInfo"`
	DryRun    bool                  `yaml:"dryRun"`
	Expect    *Expect               `yaml:"expect"`

	line int // line of the test in the suite file
}

// GroupVersionResource is a resource, written as a mapping.
type GroupVersionResource struct {
	Group    string `yaml:"group"`
	Version  string `yaml:"version"`
	Resource string `yaml:"resource"`
}

// UserInfo is the requesting user.
type UserInfo struct {
	Username string              `yaml:"username"`
	UID      string              `yaml:"uid"`
	Groups   []string            `yaml:"groups"`
	Extra    map[string][]string `yaml:"extra"`
}

// ObjectSource is an object written inline, or the name of a file holding
// it.
type ObjectSource struct {
	File   string // set when the object is in a file
	Inline []byte // JSON of an inline object
	line   int
	node   *yaml.Node
}

// UnmarshalYAML reads a file name (a string) or an inline object (a
// mapping).
func (o *ObjectSource) UnmarshalYAML(n *yaml.Node) error {
	o.line, o.node = n.Line, n
	switch {
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
		o.File = n.Value
		return nil
	case n.Kind == yaml.MappingNode:
		var v map[string]any
		if err := n.Decode(&v); err != nil {
			return err
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		o.Inline = raw
		return nil
	}
	return fmt.Errorf("line %d: expected a file name or an inline object, got %s", n.Line, describe(n))
}

// Expect is a test's expectation: the body of an Expectation document
// (FORMAT.md) without apiVersion and kind. It is parsed by the Expectation
// parser once the suite's file is known, so that failures name its lines.
type Expect struct {
	node *yaml.Node
	e    *expectation
}

// expectFields are the fields of an expectation in a suite, for the schema
// test.
var expectFields = []string{"allow", "deny", "warnings", "auditAnnotations", "object", "objectContains", "patch", "skip"}

// denyFields are the fields of a deny mapping.
var denyFields = []string{"message", "code", "reason"}

// UnmarshalYAML keeps the node for the Expectation parser.
func (x *Expect) UnmarshalYAML(n *yaml.Node) error {
	x.node = n
	return nil
}

// isSuite reports whether data is a suite file: its first document has
// apiVersion vapkit.dev/v1alpha1 and kind Suite.
func isSuite(data []byte) bool {
	var head struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&head); err != nil {
		return false
	}
	return head.APIVersion == suiteKind.GroupVersion().String() && head.Kind == suiteKind.Kind
}

// loadedSuite is a parsed suite with its files resolved.
type loadedSuite struct {
	file  string
	suite *Suite
	// sources are the files of the cluster, in order, without repeats.
	sources []string
}

// loadSuite reads and checks a suite file. Errors name the file and line.
func loadSuite(file string) (*loadedSuite, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return parseSuite(data, file)
}

// parseSuite reads the suite text data of file; the globs it names are
// resolved relative to file.
func parseSuite(data []byte, file string) (*loadedSuite, error) {
	var err error
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		return nil, suiteError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("%s:%d: a suite file holds one document", file, extra.Line)
	}
	s := &Suite{}
	// Decode again with KnownFields: yaml.Node.Decode does not check them.
	dec = yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(s); err != nil {
		return nil, suiteError(file, err)
	}
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		if tests := mappingValue(root.Content[0], "tests"); tests != nil && tests.Kind == yaml.SequenceNode {
			for i := range min(len(tests.Content), len(s.Tests)) {
				s.Tests[i].line = tests.Content[i].Line
			}
		}
	}
	if len(s.Tests) == 0 {
		return nil, fmt.Errorf("%s: a suite needs tests", file)
	}
	seen := map[string]int{}
	for i := range s.Tests {
		t := &s.Tests[i]
		if t.Name == "" {
			return nil, fmt.Errorf("%s:%d: tests[%d].name: required", file, t.line, i)
		}
		if first, ok := seen[t.Name]; ok {
			return nil, fmt.Errorf("%s:%d: tests[%d].name: %q already names the test of line %d", file, t.line, i, t.Name, first)
		}
		seen[t.Name] = t.line
		if t.Expect == nil {
			return nil, fmt.Errorf("%s:%d: tests[%d].expect: required", file, t.line, i)
		}
		p := &expectationParser{file: file, embedded: fmt.Sprintf("tests[%d].expect", i), docLine: t.Expect.node.Line}
		if t.Expect.e, err = p.parse(t.Expect.node); err != nil {
			return nil, err
		}
		if t.Object == nil && t.OldObject == nil {
			return nil, fmt.Errorf("%s:%d: tests[%d]: needs object, oldObject or both", file, t.line, i)
		}
	}
	ls := &loadedSuite{file: file, suite: s}
	dir := filepath.Dir(file)
	seenFile := map[string]bool{}
	for _, group := range []struct {
		key      string
		patterns []string
	}{{"policies", s.Policies}, {"bindings", s.Bindings}, {"params", s.Params}, {"namespaces", s.Namespaces}, {"crds", s.CRDs}, {"authorizer", s.Authorizer}} {
		for i, pat := range group.patterns {
			matches, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(pat)))
			if err != nil {
				return nil, fmt.Errorf("%s: %s[%d]: %w", file, group.key, i, err)
			}
			if len(matches) == 0 {
				return nil, fmt.Errorf("%s: %s[%d]: %q matches no file", file, group.key, i, pat)
			}
			slices.Sort(matches)
			for _, m := range matches {
				if !seenFile[m] {
					seenFile[m] = true
					ls.sources = append(ls.sources, m)
				}
			}
		}
	}
	return ls, nil
}

// files returns every file the suite uses: its sources and object files.
func (ls *loadedSuite) files() []string {
	out := slices.Clone(ls.sources)
	dir := filepath.Dir(ls.file)
	for _, t := range ls.suite.Tests {
		for _, o := range []*ObjectSource{t.Object, t.OldObject} {
			if o != nil && o.File != "" {
				out = append(out, filepath.Join(dir, filepath.FromSlash(o.File)))
			}
		}
	}
	return out
}

// mappingValue returns the value of key in mapping node n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// suiteError renders a YAML decoding error as "file:line: problem".
func suiteError(file string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			msgs[i] = file + ":" + strings.TrimPrefix(m, "line ")
		}
		return errors.New(strings.Join(msgs, "\n"))
	}
	line, msg := yamlLineOf(err)
	if line > 0 {
		return fmt.Errorf("%s:%d: %s", file, line, msg)
	}
	return fmt.Errorf("%s: %s", file, msg)
}

// yamlLineOf extracts "line N: msg" from a YAML error.
func yamlLineOf(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var line int
	if n, _ := fmt.Sscanf(msg, "line %d:", &line); n == 1 {
		_, rest, _ := strings.Cut(msg, ": ")
		return line, rest
	}
	return 0, msg
}

// object decodes one of a test's objects: strictly for built-in kinds, as
// the API server decodes under strict field validation. Problems name the
// suite file's line for inline objects and the object file's for files.
func (ls *loadedSuite) object(o *ObjectSource, path string) (*unstructured.Unstructured, error) {
	var data []byte
	name := ls.file
	if o.File != "" {
		name = filepath.Join(filepath.Dir(ls.file), filepath.FromSlash(o.File))
		var err error
		if data, err = os.ReadFile(name); err != nil {
			return nil, fmt.Errorf("%s:%d: %s: %w", ls.file, o.line, path, err)
		}
	} else {
		data = o.Inline
	}
	docs, err := manifest.DecodeWith(data, name, manifest.Options{Strict: true})
	if err != nil {
		var me *manifest.Error
		if o.File == "" && errors.As(err, &me) {
			return nil, fmt.Errorf("%s:%d: %s: %v", ls.file, nodeLine(o.node, me.Path, o.line), path, me.Err)
		}
		return nil, err
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("%s:%d: %s: want one object, found %d", name, o.line, path, len(docs))
	}
	u, ok := docs[0].Object.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("%s:%d: %s: a %T is not an object a request carries", name, docs[0].Line, path, docs[0].Object)
	}
	return u, nil
}

// refused returns the errors the API server reports when it refuses obj,
// one a line, each with the line of its field for inline objects (the
// test's line, naming the file, for objects in files); nil when errs is empty.
func (ls *loadedSuite) refused(o *ObjectSource, path string, obj *unstructured.Unstructured, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	if o.File != "" {
		path = fmt.Sprintf("%s (%s)", path, o.File)
	}
	head := fmt.Sprintf("the API server would refuse this %s (422 Invalid: %s %q is invalid)", obj.GetKind(), obj.GroupVersionKind().GroupKind(), obj.GetName())
	msgs := []string{fmt.Sprintf("%s:%d: %s: %s:", ls.file, o.line, path, head)}
	for _, e := range errs {
		line := o.line
		if o.File == "" {
			line = nodeLine(o.node, e.Field, o.line)
		}
		msgs = append(msgs, fmt.Sprintf("%s:%d: %s: %s", ls.file, line, path, e.Error()))
	}
	return errors.New(strings.Join(msgs, "\n"))
}

// operation returns the test's operation, inferred from its objects when
// not given.
func (t *SuiteTest) operation() (admissionv1.Operation, error) {
	if t.Operation != "" {
		switch op := admissionv1.Operation(t.Operation); op {
		case admissionv1.Create, admissionv1.Update, admissionv1.Delete, admissionv1.Connect:
			return op, nil
		}
		return "", fmt.Errorf("operation: %q is not CREATE, UPDATE, DELETE or CONNECT", t.Operation)
	}
	switch {
	case t.Object != nil && t.OldObject != nil:
		return admissionv1.Update, nil
	case t.Object != nil:
		return admissionv1.Create, nil
	}
	return admissionv1.Delete, nil
}

// userInfo converts the test's user.
func (t *SuiteTest) userInfo() authenticationv1.UserInfo {
	if t.UserInfo == nil {
		return authenticationv1.UserInfo{}
	}
	u := authenticationv1.UserInfo{Username: t.UserInfo.Username, UID: t.UserInfo.UID, Groups: t.UserInfo.Groups}
	if len(t.UserInfo.Extra) > 0 {
		u.Extra = map[string]authenticationv1.ExtraValue{}
		for k, v := range t.UserInfo.Extra {
			u.Extra[k] = v
		}
	}
	return u
}

// nodeLine returns the line of the field at path (spec.containers[0].name)
// under n, or of its nearest ancestor written in the file; def when n is
// nil.
func nodeLine(n *yaml.Node, path string, def int) int {
	if n == nil {
		return def
	}
	line := n.Line
	for _, step := range strings.FieldsFunc(strings.ReplaceAll(path, "[", ".["), func(r rune) bool { return r == '.' }) {
		var next *yaml.Node
		if idx, ok := strings.CutPrefix(step, "["); ok {
			var i int
			if _, err := fmt.Sscanf(strings.TrimSuffix(idx, "]"), "%d", &i); err == nil && n.Kind == yaml.SequenceNode && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
			}
		} else if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == step {
					line, next = n.Content[i].Line, n.Content[i+1]
				}
			}
		}
		if next == nil {
			break
		}
		n = next
		if n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode {
			continue
		}
		line = n.Line
	}
	return line
}
