package manifest_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vapkit/vapkit/policy/manifest"
)

// casesDir is the repository's directory of conformance cases.
const casesDir = "../testdata/cases"

// caseFiles lists the case files whose names end in suffix (recursively,
// since the project may group cases by area); it fails the test when there
// are none, so that moving the cases cannot turn the tests into no-ops.
func caseFiles(tb testing.TB, suffix string) []string {
	tb.Helper()
	var files []string
	err := filepath.WalkDir(casesDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, suffix) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("listing cases: %v", err)
	}
	if len(files) == 0 {
		tb.Fatalf("no *%s cases in %s", suffix, casesDir)
	}
	return files
}

// summary is a comparable digest of one decoded document.
type summary struct {
	Index, Item, Line int
	Type              string
	Kind, Name        string
}

func summarize(docs []manifest.Document) []summary {
	out := make([]summary, 0, len(docs))
	for _, d := range docs {
		s := summary{Index: d.Index, Item: d.Item, Line: d.Line, Type: reflect.TypeOf(d.Object).String()}
		s.Kind = d.Object.GetObjectKind().GroupVersionKind().Kind
		if m, ok := d.Object.(interface{ GetName() string }); ok {
			s.Name = m.GetName()
		}
		out = append(out, s)
	}
	return out
}

const (
	typePolicy  = "*v1.ValidatingAdmissionPolicy"
	typeBinding = "*v1.ValidatingAdmissionPolicyBinding"
	typeNS      = "*v1.Namespace"
	typeReview  = "*v1.AdmissionReview"
	typeU       = "*unstructured.Unstructured"
)

func TestDecodeKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []summary
	}{{
		name: "every kind with comments and separators",
		in: `# leading comment
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  validations: [{expression: "true"}]
---
# binding
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: b}
spec: {policyName: p, validationActions: [Deny]}
---
apiVersion: v1
kind: Namespace
metadata: {name: default}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: default}
data: {a: b}
---
apiVersion: rules.example.com/v1
kind: ReplicaLimit
metadata: {name: rl}
maxReplicas: 3
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: replicalimits.rules.example.com}
spec: {group: rules.example.com}
---
apiVersion: vapkit.dev/v1alpha1
kind: AuthorizerRules
rules: [{user: bob, decision: Allow}]
---
apiVersion: admission.k8s.io/v1
kind: AdmissionReview
request: {uid: "1", operation: CREATE, object: {a: 1}}
`,
		want: []summary{
			{Index: 1, Line: 2, Type: typePolicy, Kind: "ValidatingAdmissionPolicy", Name: "p"},
			{Index: 2, Line: 9, Type: typeBinding, Kind: "ValidatingAdmissionPolicyBinding", Name: "b"},
			{Index: 3, Line: 14, Type: typeNS, Kind: "Namespace", Name: "default"},
			{Index: 4, Line: 18, Type: typeU, Kind: "ConfigMap", Name: "cm"},
			{Index: 5, Line: 23, Type: typeU, Kind: "ReplicaLimit", Name: "rl"},
			{Index: 6, Line: 28, Type: typeU, Kind: "CustomResourceDefinition", Name: "replicalimits.rules.example.com"},
			{Index: 7, Line: 33, Type: typeU, Kind: "AuthorizerRules"},
			{Index: 8, Line: 37, Type: typeReview, Kind: "AdmissionReview"},
		},
	}, {
		name: "empty documents are counted but skipped",
		in: `---
# header only
---
apiVersion: v1
kind: Namespace
metadata: {name: a}
---
---
# nothing here
---
apiVersion: v1
kind: Namespace
metadata: {name: b}
---
`,
		want: []summary{
			{Index: 2, Line: 4, Type: typeNS, Kind: "Namespace", Name: "a"},
			{Index: 5, Line: 11, Type: typeNS, Kind: "Namespace", Name: "b"},
		},
	}, {
		name: "comment header before the first separator is not a document",
		in:   "# header\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n",
		want: []summary{{Index: 1, Line: 3, Type: typeNS, Kind: "Namespace", Name: "a"}},
	}, {
		name: "content on the separator line",
		in:   "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n--- {apiVersion: v1, kind: Namespace, metadata: {name: b}}\n",
		want: []summary{
			{Index: 1, Line: 1, Type: typeNS, Kind: "Namespace", Name: "a"},
			{Index: 2, Line: 4, Type: typeNS, Kind: "Namespace", Name: "b"},
		},
	}, {
		name: "CRLF line endings",
		in:   "apiVersion: v1\r\nkind: Namespace\r\nmetadata: {name: a}\r\n---\r\napiVersion: v1\r\nkind: Namespace\r\nmetadata: {name: b}\r\n",
		want: []summary{
			{Index: 1, Line: 1, Type: typeNS, Kind: "Namespace", Name: "a"},
			{Index: 2, Line: 5, Type: typeNS, Kind: "Namespace", Name: "b"},
		},
	}, {
		name: "YAML List",
		in: `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Namespace
  metadata: {name: a}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: b}
`,
		want: []summary{
			{Index: 1, Item: 1, Line: 4, Type: typeNS, Kind: "Namespace", Name: "a"},
			{Index: 1, Item: 2, Line: 7, Type: typeU, Kind: "ConfigMap", Name: "b"},
		},
	}, {
		name: "JSON object",
		in:   "\n\n{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"a\"}}\n",
		want: []summary{{Index: 1, Line: 3, Type: typeNS, Kind: "Namespace", Name: "a"}},
	}, {
		name: "concatenated JSON objects",
		in: `{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}
{
  "apiVersion": "admissionregistration.k8s.io/v1",
  "kind": "ValidatingAdmissionPolicyBinding",
  "metadata": {"name": "b"},
  "spec": {"policyName": "p"}
}{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}`,
		want: []summary{
			{Index: 1, Line: 1, Type: typeNS, Kind: "Namespace", Name: "a"},
			{Index: 2, Line: 2, Type: typeBinding, Kind: "ValidatingAdmissionPolicyBinding", Name: "b"},
			{Index: 3, Line: 7, Type: typeU, Kind: "ConfigMap", Name: "c"},
		},
	}, {
		name: "JSON List",
		in: `{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}},
  {"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "ValidatingAdmissionPolicy",
   "metadata": {"name": "p"}}
]}`,
		want: []summary{
			{Index: 1, Item: 1, Line: 2, Type: typeNS, Kind: "Namespace", Name: "a"},
			{Index: 1, Item: 2, Line: 3, Type: typePolicy, Kind: "ValidatingAdmissionPolicy", Name: "p"},
		},
	}, {
		name: "flow-style YAML that is not JSON",
		in:   "{apiVersion: v1, kind: Namespace, metadata: {name: a}}\n---\n{apiVersion: v1, kind: Namespace, metadata: {name: b}}\n",
		want: []summary{
			{Index: 1, Line: 1, Type: typeNS, Kind: "Namespace", Name: "a"},
			{Index: 2, Line: 3, Type: typeNS, Kind: "Namespace", Name: "b"},
		},
	}, {
		name: "JSON documents separated as YAML",
		in:   "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"a\"}}\n---\n{\"apiVersion\": \"v1\",\n \"kind\": \"Namespace\"}\n",
		want: []summary{
			{Index: 1, Line: 1, Type: typeNS, Kind: "Namespace", Name: "a"},
			{Index: 2, Line: 3, Type: typeNS, Kind: "Namespace"},
		},
	}, {
		name: "only comments",
		in:   "# nothing\n\n# at all\n",
		want: []summary{},
	}, {
		name: "empty input",
		in:   "",
		want: []summary{},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			docs, err := manifest.Decode([]byte(tc.in), "in.yaml")
			if err != nil {
				t.Fatalf("Decode() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, summarize(docs)); diff != "" {
				t.Errorf("Decode() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	const vap = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\n"
	tests := []struct {
		name     string
		in       string
		want     string // the full error text
		wantPath string // Path of the first *Error
	}{{
		name:     "missing apiVersion",
		in:       "kind: Namespace\nmetadata: {name: a}\n",
		want:     "in.yaml:1: document 1 (Namespace/a): apiVersion not set",
		wantPath: "apiVersion",
	}, {
		name:     "missing kind",
		in:       "# c\napiVersion: v1\nmetadata: {name: a}\n",
		want:     "in.yaml:2: document 1: kind not set",
		wantPath: "kind",
	}, {
		name:     "apiVersion of the wrong type",
		in:       "apiVersion: 1\nkind: Namespace\n",
		want:     "in.yaml:1: document 1 (Namespace): apiVersion: expected string, got number",
		wantPath: "apiVersion",
	}, {
		name:     "malformed apiVersion",
		in:       "apiVersion: a/b/c\nkind: Thing\n",
		want:     "in.yaml:1: document 1 (Thing): apiVersion: unexpected GroupVersion string: a/b/c",
		wantPath: "apiVersion",
	}, {
		name:     "unknown field in a policy",
		in:       "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n" + vap + "spec:\n  validations:\n  - expression: \"true\"\n    mesage: hi\n",
		want:     `in.yaml:11: document 2 (ValidatingAdmissionPolicy/p): unknown field "spec.validations[0].mesage"`,
		wantPath: "spec.validations[0].mesage",
	}, {
		name:     "wrong type in a policy",
		in:       vap + "spec:\n  validations:\n  - expression: \"true\"\n  - expression: 5\n",
		want:     "in.yaml:7: document 1 (ValidatingAdmissionPolicy/p): spec.validations[1].expression: expected string, got number",
		wantPath: "spec.validations[1].expression",
	}, {
		name:     "YAML 1.1 boolean where a string is expected",
		in:       vap + "spec:\n  validations:\n  - expression: \"true\"\n    message: yes\n",
		want:     "in.yaml:7: document 1 (ValidatingAdmissionPolicy/p): spec.validations[0].message: expected string, got boolean",
		wantPath: "spec.validations[0].message",
	}, {
		name:     "field names are case-sensitive",
		in:       vap + "Spec: {}\n",
		want:     `in.yaml:4: document 1 (ValidatingAdmissionPolicy/p): unknown field "Spec"`,
		wantPath: "Spec",
	}, {
		name:     "object expected",
		in:       vap + "spec:\n  matchConstraints: [1]\n",
		want:     "in.yaml:5: document 1 (ValidatingAdmissionPolicy/p): spec.matchConstraints: expected object, got array",
		wantPath: "spec.matchConstraints",
	}, {
		name:     "unknown field in a v1alpha1 binding",
		in:       "apiVersion: admissionregistration.k8s.io/v1alpha1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: b}\nspec:\n  paramRef: {name: x, notFound: Deny}\n",
		want:     `in.yaml:5: document 1 (ValidatingAdmissionPolicyBinding/b): unknown field "spec.paramRef.notFound"`,
		wantPath: "spec.paramRef.notFound",
	}, {
		name:     "integer expected",
		in:       "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  generation: 1.5\n",
		want:     "in.yaml:5: document 1 (Namespace/a): metadata.generation: expected integer, got number 1.5",
		wantPath: "metadata.generation",
	}, {
		name:     "bad timestamp",
		in:       "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  creationTimestamp: yesterday\n",
		want:     `in.yaml:5: document 1 (Namespace/a): metadata.creationTimestamp: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`,
		wantPath: "metadata.creationTimestamp",
	}, {
		name:     "malformed metadata of an unstructured object",
		in:       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: [x]\n",
		want:     "in.yaml:5: document 1 (ConfigMap/a): metadata.labels: expected object, got array",
		wantPath: "metadata.labels",
	}, {
		name:     "unknown metadata field of an unstructured object",
		in:       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namepsace: b\n",
		want:     `in.yaml:5: document 1 (ConfigMap/a): unknown field "metadata.namepsace"`,
		wantPath: "metadata.namepsace",
	}, {
		name: "duplicate key in YAML",
		in:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  k: 1\n  k: 2\n",
		want: `in.yaml:6: document 1: invalid YAML: key "k" already set in map`,
	}, {
		name:     "duplicate key in JSON",
		in:       "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"a\"},\n \"data\": {\"k\": \"1\",\n  \"k\": \"2\"}}",
		want:     `in.yaml:3: document 1 (ConfigMap/a): duplicate field "data.k"`,
		wantPath: "data.k",
	}, {
		name:     "duplicate key in typed JSON",
		in:       "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"a\",\n \"name\": \"b\"}}",
		want:     `in.yaml:2: document 1 (Namespace/b): duplicate field "metadata.name"`,
		wantPath: "metadata.name",
	}, {
		name:     "wrong type in JSON",
		in:       "{\"apiVersion\": \"admissionregistration.k8s.io/v1\",\n \"kind\": \"ValidatingAdmissionPolicyBinding\",\n \"spec\": {\n  \"validationActions\": \"Deny\"}}",
		want:     "in.yaml:4: document 1 (ValidatingAdmissionPolicyBinding): spec.validationActions: expected array, got string",
		wantPath: "spec.validationActions",
	}, {
		name: "YAML syntax error",
		in:   "apiVersion: v1\nkind: Namespace\n---\napiVersion: v1\nkind: [Namespace\n",
		want: "in.yaml:5: document 2: invalid YAML: did not find expected ',' or ']'",
	}, {
		name: "JSON syntax error in the second value",
		in:   "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\"}\n{\"apiVersion\": \"v1\",\n \"kind\" \"Namespace\"}",
		want: "in.yaml:3: document 2: invalid JSON: invalid character '\"' after object key",
	}, {
		name: "truncated JSON",
		in:   "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\"}\n{\"apiVersion\": \"v1\",\n",
		want: "in.yaml:2: document 2: invalid JSON: unexpected EOF",
	}, {
		name: "scalar document",
		in:   "apiVersion: v1\nkind: Namespace\n---\n# c\njust text\n",
		want: "in.yaml:5: document 2: expected an object, got string",
	}, {
		name: "array document",
		in:   "- a\n- b\n",
		want: "in.yaml:1: document 1: expected an object, got array",
	}, {
		name:     "error in a List item",
		in:       "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n- apiVersion: v1\n  kind: Namespace\n  metadata: {name: x}\n  spec: {finalizers: 1}\n",
		want:     "in.yaml:9: document 1, item 2 (Namespace/x): spec.finalizers: expected array, got number",
		wantPath: "spec.finalizers",
	}, {
		name: "List inside a List",
		in:   "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items: []\n",
		want: "in.yaml:4: document 1, item 1 (List): a List inside a List is not supported",
	}, {
		name:     "List items of the wrong type",
		in:       "apiVersion: v1\nkind: List\nitems: {}\n",
		want:     "in.yaml:3: document 1 (List): items: expected array, got object",
		wantPath: "items",
	}, {
		name:     "two broken documents",
		in:       "kind: A\n---\nkind: B\n",
		want:     "in.yaml:1: document 1 (A): apiVersion not set\nin.yaml:3: document 2 (B): apiVersion not set",
		wantPath: "apiVersion",
	}, {
		name: "invalid UTF-8",
		in:   "apiVersion: v1\nkind: \xff\xfe\n",
		want: "in.yaml:1: document 1: invalid YAML: invalid leading UTF-8 octet",
	}, {
		name: "deep nesting",
		in:   "apiVersion: v1\nkind: ConfigMap\ndata: " + strings.Repeat("[", 20000) + "\n",
		want: "in.yaml:3: document 1: invalid YAML: exceeded max depth of 10000",
	}, {
		name: "deep JSON nesting",
		in:   `{"a": ` + strings.Repeat("[", 20000),
		want: "in.yaml:1: document 1: invalid YAML: exceeded max depth of 10000",
	}, {
		name: "alias bomb",
		in:   "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n",
		want: "in.yaml:1: document 1: invalid YAML: document contains excessive aliasing",
	}, {
		name: "NaN cannot be JSON",
		in:   "apiVersion: v1\nkind: ConfigMap\ndata: {a: .nan}\n",
		want: "in.yaml:1: document 1: invalid YAML: json: unsupported value: NaN",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			docs, err := manifest.Decode([]byte(tc.in), "in.yaml")
			if err == nil {
				t.Fatalf("Decode() = %d documents, want error %q", len(docs), tc.want)
			}
			if docs != nil {
				t.Errorf("Decode() documents = %v, want nil with an error", docs)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("Decode() error =\n%s\nwant\n%s", got, tc.want)
			}
			var e *manifest.Error
			if !errors.As(err, &e) {
				t.Fatalf("Decode() error %T is not a *manifest.Error", err)
			}
			if e.Path != tc.wantPath {
				t.Errorf("Decode() error Path = %q, want %q", e.Path, tc.wantPath)
			}
		})
	}
}

func TestDecodeTooManyErrors(t *testing.T) {
	t.Parallel()
	in := strings.Repeat("kind: A\n---\n", 25)
	_, err := manifest.Decode([]byte(in), "")
	if err == nil {
		t.Fatal("Decode() error = nil, want an error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 11 {
		t.Errorf("Decode() error has %d lines, want 11:\n%v", len(lines), err)
	}
	if want := "<input>:1: document 1 (A): apiVersion not set"; lines[0] != want {
		t.Errorf("Decode() first error = %q, want %q", lines[0], want)
	}
	if want := "too many errors; later documents were not checked"; lines[len(lines)-1] != want {
		t.Errorf("Decode() last line = %q, want %q", lines[len(lines)-1], want)
	}
}

func TestDecodeFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ns.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: Namespace\nspec: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := manifest.DecodeFile(path)
	want := path + ":3: document 1 (Namespace): spec: expected object, got number"
	if err == nil || err.Error() != want {
		t.Errorf("DecodeFile() error = %v, want %s", err, want)
	}
	if _, err := manifest.DecodeFile(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("DecodeFile(missing) error = %v, want os.ErrNotExist", err)
	}
}

func TestDecodeUnstructuredValues(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"apiVersion: rules.example.com/v1\nkind: ReplicaLimit\nmetadata: {name: r}\nmaxReplicas: 3\nratio: 0.5\nbig: 9007199254740993\nlist: [1, two]\n",
		`{"apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit", "metadata": {"name": "r"}, "maxReplicas": 3, "ratio": 0.5, "big": 9007199254740993, "list": [1, "two"]}`,
	} {
		docs, err := manifest.Decode([]byte(in), "")
		if err != nil {
			t.Fatalf("Decode() error = %v", err)
		}
		u := docs[0].Object.(*unstructured.Unstructured)
		want := map[string]any{
			"apiVersion":  "rules.example.com/v1",
			"kind":        "ReplicaLimit",
			"metadata":    map[string]any{"name": "r"},
			"maxReplicas": int64(3),
			"ratio":       0.5,
			"big":         int64(9007199254740993),
			"list":        []any{int64(1), "two"},
		}
		if diff := cmp.Diff(want, u.Object); diff != "" {
			t.Errorf("Decode(%.20q) object mismatch (-want +got):\n%s", in, diff)
		}
	}
}

func TestDecodeAdmissionReview(t *testing.T) {
	t.Parallel()
	yamlIn := `apiVersion: admission.k8s.io/v1
kind: AdmissionReview
request:
  uid: u1
  kind: {group: apps, version: v1, kind: Deployment}
  resource: {group: apps, version: v1, resource: deployments}
  operation: UPDATE
  userInfo: {username: alice}
  object:
    apiVersion: apps/v1
    kind: Deployment
    spec: {replicas: 2}
  oldObject: {spec: {replicas: 1}}
  dryRun: true
`
	jsonIn := `{
  "apiVersion": "admission.k8s.io/v1",
  "kind": "AdmissionReview",
  "request": {
    "uid": "u1",
    "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
    "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
    "operation": "UPDATE",
    "userInfo": {"username": "alice"},
    "object": {"apiVersion": "apps/v1", "kind": "Deployment",
               "spec": {"replicas": 2}},
    "oldObject": {"spec": {"replicas": 1}},
    "dryRun": true
  }
}`
	tests := []struct{ name, in string }{{"yaml", yamlIn}, {"json", jsonIn}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			docs, err := manifest.Decode([]byte(tc.in), "")
			if err != nil {
				t.Fatalf("Decode() error = %v", err)
			}
			r, ok := docs[0].Object.(*admissionv1.AdmissionReview)
			if !ok {
				t.Fatalf("Decode() object = %T, want *admissionv1.AdmissionReview", docs[0].Object)
			}
			req := r.Request
			if got, want := string(req.Object.Raw), `{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":2}}`; got != want {
				t.Errorf("request.object = %s, want %s", got, want)
			}
			if got, want := string(req.OldObject.Raw), `{"spec":{"replicas":1}}`; got != want {
				t.Errorf("request.oldObject = %s, want %s", got, want)
			}
			if req.Options.Raw != nil || req.Object.Object != nil {
				t.Errorf("request.options = %v, object.Object = %v, want nil", req.Options.Raw, req.Object.Object)
			}
			if req.UID != "u1" || req.Operation != admissionv1.Update || req.DryRun == nil || !*req.DryRun || req.UserInfo.Username != "alice" {
				t.Errorf("request = %+v, want uid u1, UPDATE, dryRun, alice", req)
			}
		})
	}
}

// TestDecodeCases decodes every conformance case: each must decode, with
// policies defaulted, and contain the AdmissionReview of the request.
func TestDecodeCases(t *testing.T) {
	t.Parallel()
	for _, file := range caseFiles(t, ".yaml") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			docs, err := manifest.DecodeFile(file)
			if err != nil {
				t.Fatalf("DecodeFile() error = %v", err)
			}
			reviews := 0
			for _, d := range docs {
				switch o := d.Object.(type) {
				case *admissionv1.AdmissionReview:
					reviews++
				case *admissionregistrationv1.ValidatingAdmissionPolicy:
					if o.Spec.FailurePolicy == nil {
						t.Errorf("document %d: failurePolicy not defaulted", d.Index)
					}
				case *admissionregistrationv1.ValidatingAdmissionPolicyBinding, *corev1.Namespace, *unstructured.Unstructured:
				default:
					t.Errorf("document %d: unexpected type %T", d.Index, o)
				}
				if d.Index < 1 || d.Line < 1 {
					t.Errorf("document %d: line %d, want both >= 1", d.Index, d.Line)
				}
			}
			if reviews == 0 {
				t.Errorf("DecodeFile() has no AdmissionReview, want the request")
			}
		})
	}
}

// TestDecodeLarge checks that big inputs decode in one piece.
func TestDecodeLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large input")
	}
	t.Parallel()
	var js bytes.Buffer
	js.WriteString(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {`)
	n := 0
	for ; js.Len() < 20<<20; n++ {
		if n > 0 {
			js.WriteString(",\n")
		}
		fmt.Fprintf(&js, `"k%d": "%s"`, n, strings.Repeat("v", 100))
	}
	js.WriteString("}}\n")
	var ym bytes.Buffer
	docs := 0
	for ; ym.Len() < 2<<20; docs++ {
		fmt.Fprintf(&ym, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d}\ndata: {a: %q}\n", docs, strings.Repeat("v", 100))
	}
	tests := []struct {
		name  string
		in    []byte
		check func([]manifest.Document) error
	}{{
		name: "20 MB JSON object",
		in:   js.Bytes(),
		check: func(d []manifest.Document) error {
			u := d[0].Object.(*unstructured.Unstructured)
			if got := len(u.Object["data"].(map[string]any)); got != n {
				return fmt.Errorf("%d data keys, want %d", got, n)
			}
			return nil
		},
	}, {
		name: "many YAML documents",
		in:   ym.Bytes(),
		check: func(d []manifest.Document) error {
			if len(d) != docs || d[docs-1].Index != docs || d[docs-1].Line != 5*docs-3 {
				return fmt.Errorf("%d documents, last %+v; want %d", len(d), d[len(d)-1], docs)
			}
			return nil
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := manifest.Decode(tc.in, "big")
			if err != nil {
				t.Fatalf("Decode() error = %v", err)
			}
			if err := tc.check(got); err != nil {
				t.Errorf("Decode() = %v", err)
			}
		})
	}
}

// FuzzDecode checks that Decode never panics, returns documents or an error
// but not both, and is deterministic. It is seeded with one document of
// each case (a different one from case to case, so that every kind is
// seeded) and a few expected responses: small inputs, which the fuzzer
// mutates and minimizes quickly. The seeds below and the "---" a mutation
// may insert give it multi-document streams.
func FuzzDecode(f *testing.F) {
	for i, file := range caseFiles(f, ".yaml") {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		docs := strings.Split(string(data), "\n---\n")
		f.Add([]byte(docs[i%len(docs)]))
	}
	for _, file := range caseFiles(f, ".expected.json")[:4] {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"---\n---\n",
		"apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Namespace}]\n",
		`{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Namespace"}]}`,
		`{"apiVersion": "admissionregistration.k8s.io/v1alpha1", "kind": "ValidatingAdmissionPolicyBinding", "spec": {"paramRef": {}}}{}`,
		"a: &a [*a]\n",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: \xff}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := manifest.Decode(data, "fuzz")
		if err != nil {
			if docs != nil {
				t.Fatalf("Decode() = %d documents and error %v", len(docs), err)
			}
			var e *manifest.Error
			if !errors.As(err, &e) {
				t.Fatalf("Decode() error %T %v is not a *manifest.Error", err, err)
			}
			if e.Document < 1 || e.Line < 1 {
				t.Fatalf("Decode() error has document %d line %d: %v", e.Document, e.Line, err)
			}
		}
		docs2, err2 := manifest.Decode(data, "fuzz")
		if fmt.Sprint(err) != fmt.Sprint(err2) || len(docs) != len(docs2) {
			t.Fatalf("Decode() not deterministic: %v / %v", err, err2)
		}
		for i := range docs {
			if !runtimeObjectsEqual(docs[i].Object, docs2[i].Object) || docs[i].Line != docs2[i].Line {
				t.Fatalf("Decode() document %d not deterministic", i)
			}
		}
	})
}

func runtimeObjectsEqual(a, b runtime.Object) bool {
	return reflect.DeepEqual(a, b)
}
