package reviewcmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/vapkit/vapkit/policy"
)

// finalWeb is the final object of the object expectation tests.
const finalWeb = `{"apiVersion": "apps/v1", "kind": "Deployment",
 "metadata": {"name": "web", "labels": {"app": "web", "team": "a"}, "annotations": {"example.com/x": "1"}},
 "spec": {"replicas": 2, "ratio": 0.5, "template": {"spec": {"containers": [
   {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]},
   {"name": "b", "image": "b:1"},
   {"name": "c", "image": "c:1"}]}}}}`

const webPatch = `[{"op": "add", "path": "/metadata/labels/team", "value": "a"}]`

func mustMutated(t *testing.T, object, patch string) *mutated {
	t.Helper()
	m := &mutated{patch: []any{}}
	if object != "" {
		if err := decodeJSON([]byte(object), &m.object); err != nil {
			t.Fatal(err)
		}
	}
	if patch != "" {
		if err := decodeJSON([]byte(patch), &m.patch); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// TestObjectExpectations: the object, objectContains and patch checks,
// with the subset semantics of FORMAT.md.
func TestObjectExpectations(t *testing.T) {
	const head = "apiVersion: vapkit.dev/v1alpha1\nkind: Expectation\nallow: true\n"
	tests := []struct {
		name string
		doc  string // appended to head; line 4 is its first line
		// object and patch are the final object and patch (JSON); ""
		// is no object and no patch.
		object, patch string
		// want are the failed checks as "line path".
		want []string
	}{
		{name: "subset of maps", doc: "objectContains:\n  metadata: {labels: {team: a}}\n  spec: {replicas: 2}\n", object: finalWeb},
		{name: "missing key", doc: "objectContains:\n  metadata:\n    labels: {owner: b}\n", object: finalWeb,
			want: []string{"6 objectContains.metadata.labels.owner"}},
		{name: "different value", doc: "objectContains:\n  spec: {replicas: 3}\n", object: finalWeb,
			want: []string{"5 objectContains.spec.replicas"}},
		{name: "key with a slash", doc: "objectContains:\n  metadata:\n    annotations: {example.com/x: '2'}\n", object: finalWeb,
			want: []string{`6 objectContains.metadata.annotations["example.com/x"]`}},
		{name: "null is an absent key", doc: "objectContains:\n  metadata: {finalizers: null}\n", object: finalWeb},
		{name: "null fails on a present key", doc: "objectContains:\n  metadata: {labels: null}\n", object: finalWeb,
			want: []string{"5 objectContains.metadata.labels"}},
		{name: "numbers compare by value", doc: "objectContains:\n  spec: {replicas: 2.0, ratio: 5e-1}\n", object: finalWeb},
		{name: "a string is not a number", doc: "objectContains:\n  spec: {replicas: '2'}\n", object: finalWeb,
			want: []string{"5 objectContains.spec.replicas"}},
		{name: "a mapping where a list is", doc: "objectContains:\n  spec: {template: {spec: {containers: {name: a}}}}\n", object: finalWeb,
			want: []string{"5 objectContains.spec.template.spec.containers"}},
		{name: "list items in order, others between", doc: "objectContains:\n  spec: {template: {spec: {containers: [{name: a}, {image: 'c:1'}]}}}\n", object: finalWeb},
		{name: "nested subset in list items", doc: "objectContains:\n  spec: {template: {spec: {containers: [{env: [{name: Y}]}]}}}\n", object: finalWeb},
		{name: "list items out of order", doc: "objectContains:\n  spec:\n    template:\n      spec:\n        containers:\n        - {name: c}\n        - {name: a}\n", object: finalWeb,
			want: []string{"10 objectContains.spec.template.spec.containers[1]"}},
		{name: "one list item matches once", doc: "objectContains:\n  spec:\n    template:\n      spec:\n        containers:\n        - {name: b}\n        - {name: b}\n", object: finalWeb,
			want: []string{"10 objectContains.spec.template.spec.containers[1]"}},
		{name: "empty list is in every list", doc: "objectContains:\n  spec: {template: {spec: {containers: []}}}\n", object: finalWeb},
		{name: "no object", doc: "objectContains:\n  metadata: {name: web}\n",
			want: []string{"5 objectContains"}},
		{name: "whole object", doc: "object: " + strings.ReplaceAll(finalWeb, "\n", "\n  ") + "\n", object: finalWeb},
		{name: "whole object differs", doc: "object: {apiVersion: apps/v1, kind: Deployment}\n", object: finalWeb,
			want: []string{"4 object"}},
		{name: "null object", doc: "object: null\n"},
		{name: "null object but one", doc: "object: null\n", object: finalWeb, want: []string{"4 object"}},
		{name: "patch", doc: "patch:\n- {op: add, path: /metadata/labels/team, value: a}\n", object: finalWeb, patch: webPatch},
		{name: "patch differs", doc: "patch:\n- {op: add, path: /metadata/labels/team, value: b}\n", object: finalWeb, patch: webPatch,
			want: []string{"4 patch"}},
		{name: "empty patch", doc: "patch: []\n", object: finalWeb},
		{name: "empty patch but one", doc: "patch: []\n", object: finalWeb, patch: webPatch, want: []string{"4 patch"}},
		{name: "every failure listed", doc: "object: {}\nobjectContains: {kind: Pod}\npatch: []\n", object: finalWeb, patch: webPatch,
			want: []string{"4 object", "5 objectContains.kind", "6 patch"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := parseExpectationFile("x.yaml", []byte(head+tc.doc))
			if err != nil {
				t.Fatalf("parseExpectationFile() error = %v", err)
			}
			var got []string
			for _, m := range e.check(admitted, mustMutated(t, tc.object, tc.patch)) {
				got = append(got, strconv.Itoa(m.line)+" "+m.path)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("check() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestObjectExpectationDiffs: failures show the values as YAML and a line
// diff.
func TestObjectExpectationDiffs(t *testing.T) {
	const head = "apiVersion: vapkit.dev/v1alpha1\nkind: Expectation\nallow: true\n"
	tests := []struct {
		name, doc, want string
	}{
		{name: "whole object", doc: "object: {apiVersion: apps/v1, kind: Deployment, metadata: {name: web, labels: {team: b}}}\n",
			want: "  apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    labels:\n-     team: b\n+     team: a\n    name: web\n+ spec:\n+   items:\n+   - name: a\n+   - name: b\n+   - name: c"},
		{name: "missing field", doc: "objectContains: {metadata: {labels: {owner: b}}}\n", want: "- b\n+ no such field"},
		{name: "list item", doc: "objectContains: {spec: {items: [{name: b}, {name: a}]}}\n",
			want: "- name: a\n+ # items [2:] of the list, after the one matching item 0\n+ - name: c"},
		{name: "patch", doc: "patch: []\n", want: "- []\n+ {\"op\":\"add\",\"path\":\"/metadata/labels/team\",\"value\":\"a\"}"},
	}
	final := `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"team": "a"}},
		"spec": {"items": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}}`
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := parseExpectationFile("x.yaml", []byte(head+tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			ms := e.check(admitted, mustMutated(t, final, webPatch))
			if len(ms) != 1 {
				t.Fatalf("check() = %+v, want one mismatch", ms)
			}
			if got := ms[0].failure("x.yaml").Diff; got != tc.want {
				t.Errorf("diff:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestObjectExpectationErrors(t *testing.T) {
	const head = "apiVersion: vapkit.dev/v1alpha1\nkind: Expectation\nallow: true\n"
	tests := []struct{ name, doc, want string }{
		{name: "object a list", doc: "object: [a]\n", want: "x.yaml:4: document 1 (Expectation): object: expected a mapping, got a list"},
		{name: "objectContains null", doc: "objectContains: null\n", want: "x.yaml:4: document 1 (Expectation): objectContains: expected a mapping, got null"},
		{name: "non-string key", doc: "objectContains: {metadata: {1: a}}\n", want: "x.yaml:4: document 1 (Expectation): objectContains: not a JSON value"},
		{name: "patch a mapping", doc: "patch: {op: add}\n", want: "x.yaml:4: document 1 (Expectation): patch: expected a list of JSON patch operations, got a mapping"},
		{name: "patch op unknown", doc: "patch:\n- {op: merge, path: /a}\n", want: `x.yaml:5: document 1 (Expectation): patch[0].op: "merge" is not one of add, remove, replace, move, copy, test`},
		{name: "patch without path", doc: "patch:\n- {op: remove}\n", want: "x.yaml:5: document 1 (Expectation): patch[0]: an operation needs op and path"},
		{name: "patch unknown field", doc: "patch:\n- {op: remove, path: /a, vaule: 1}\n", want: "x.yaml:5: document 1 (Expectation): patch[0].vaule: unknown field; want op, path, from, value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseExpectationFile("x.yaml", []byte(head+tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("parseExpectationFile() error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestMutatedOf: the final object is the request's object as written with
// the decision's patch applied; an unchanged object is the request's.
func TestMutatedOf(t *testing.T) {
	raw := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}`)
	d := &policy.Decision{Patch: []byte(`[{"op":"add","path":"/data/b","value":"2"}]`),
		Object: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}, "data": map[string]any{"a": "1", "b": "2"}}}}
	m, err := mutatedOf(raw, d)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(m.object)
	if want := `{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"name":"c"}}`; string(got) != want {
		t.Errorf("object = %s, want %s", got, want)
	}
	if len(m.patch) != 1 {
		t.Errorf("patch = %v, want one operation", m.patch)
	}
	// A patch that does not apply to the written form falls back to the
	// decision's object.
	d.Patch = []byte(`[{"op":"replace","path":"/status/x","value":"2"}]`)
	if m, err = mutatedOf(raw, d); err != nil {
		t.Fatal(err)
	}
	if got, _ = json.Marshal(m.object); !strings.Contains(string(got), `"b":"2"`) {
		t.Errorf("object = %s, want the decision's object", got)
	}
	m, err = mutatedOf(raw, &policy.Decision{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ = json.Marshal(m.object); string(got) != `{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"name":"c"}}` || len(m.patch) != 0 {
		t.Errorf("unchanged: object = %s, patch = %v", got, m.patch)
	}
}

// mutatingSuite is the example suite of mutating policies.
var mutatingSuite = filepath.Join("..", "..", "review", "suites", "mutating-defaults.yaml")

// TestRunMutatingSuite: the example suite of mutating policies passes,
// and its coverage counts the mutating policies' expressions.
func TestRunMutatingSuite(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-format", "json", mutatingSuite}, &out); err != nil {
		t.Fatalf("run() error = %v\n%s", err, out.String())
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if want := (summary{Total: 5, Passed: 5}); rep.Summary != want {
		t.Errorf("summary = %+v, want %+v\n%s", rep.Summary, want, out.String())
	}
	if len(rep.Coverage) != 1 {
		t.Fatalf("coverage = %+v, want one suite", rep.Coverage)
	}
	type row struct {
		Policy, Kind, Path string
		True, False, Error int
	}
	var got []row
	for _, p := range rep.Coverage[0].Policies {
		for _, e := range p.Expressions {
			got = append(got, row{p.Policy, p.Kind, e.Path, e.True, e.False, e.Error})
		}
	}
	const mut = "MutatingAdmissionPolicy"
	// Match conditions are evaluated again on the reinvocation pass
	// whenever an earlier policy changed the object.
	want := []row{
		{"default-team", mut, "spec.matchConditions[0].expression", 2, 6, 0},
		{"default-team", mut, "spec.variables[0].expression", 2, 0, 0},
		{"default-team", mut, "spec.mutations[0].applyConfiguration.expression", 2, 0, 0},
		{"always-pull", mut, "spec.mutations[0].applyConfiguration.expression", 4, 0, 0},
		{"at-least-one", mut, "spec.matchConditions[0].expression", 1, 7, 0},
		{"at-least-one", mut, "spec.mutations[0].jsonPatch.expression", 1, 0, 0},
		{"team-and-replicas", "", "spec.validations[0].expression", 4, 0, 0},
		{"team-and-replicas", "", "spec.validations[1].expression", 3, 1, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("coverage mismatch (-want +got):\n%s", diff)
	}
}

// TestRunMutatingFailures: unmet object expectations fail with the file
// and line of the expectation and a line diff, in suites and case files.
func TestRunMutatingFailures(t *testing.T) {
	t.Parallel()
	cluster, err := os.ReadFile(filepath.Join(filepath.Dir(mutatingSuite), "mutating", "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const web = `
  object:
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: shop}
    spec:
      replicas: 0
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          containers: [{name: nginx, image: "nginx:1"}]
`
	suite := suiteHead + "policies: [cluster.yaml]\ntests:\n" +
		"- name: wrong team" + web +
		"  expect:\n" +
		"    allow: true\n" +
		"    objectContains:\n" +
		"      metadata:\n" +
		"        labels: {team: web}\n" +
		"- name: wrong patch" + web +
		"  expect:\n" +
		"    allow: true\n" +
		"    patch: []\n"
	review := `{"uid": "u", "kind": {"group": "apps", "version": "v1", "kind": "Deployment"}, "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
  "name": "web", "namespace": "shop", "operation": "CREATE", "userInfo": {"username": "a"},
  "object": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "nginx", "image": "nginx:1"}]}}}}}`
	caseFile := string(cluster) + "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\napiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest: " + review + "\n---\n" +
		expectHead + "allow: true\nobjectContains:\n  spec:\n    template:\n      spec:\n        containers:\n        - {name: nginx, imagePullPolicy: Never}\n"
	dir := writeDir(t, map[string]string{"cluster.yaml": string(cluster), "suite.yaml": suite, "cases/web.yaml": caseFile})
	var out bytes.Buffer
	err = run(t.Context(), []string{filepath.Join(dir, "suite.yaml"), filepath.Join(dir, "cases")}, &out)
	if err == nil {
		t.Fatalf("run() succeeded, want failures:\n%s", out.String())
	}
	suitePath, casePath := filepath.Join(dir, "suite.yaml"), filepath.Join(dir, "cases", "web.yaml")
	at := func(path, text, sub string) string {
		i := strings.Index(text, sub)
		if i < 0 {
			t.Fatalf("%q not in the test's text", sub)
		}
		return path + ":" + strconv.Itoa(1+strings.Count(text[:i], "\n"))
	}
	text := out.String()
	for _, want := range []string{
		"--- FAIL: wrong team (" + at(suitePath, suite, "- name: wrong team") + ")\n" +
			"    " + at(suitePath, suite, "labels: {team: web}") + ": objectContains.metadata.labels.team (-want +got):\n" +
			"        - web\n" +
			"        + platform\n",
		"--- FAIL: wrong patch (" + at(suitePath, suite, "- name: wrong patch") + ")\n" +
			"    " + at(suitePath, suite, "patch: []") + ": patch (-want +got):\n" +
			"        - []\n" +
			"        + {\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{\"team\":\"platform\"}}\n" +
			"        + {\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":1}\n" +
			"        + {\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/imagePullPolicy\",\"value\":\"Always\"}\n",
		"--- FAIL: web\n" +
			"    " + at(casePath, caseFile, "- {name: nginx, imagePullPolicy: Never}") + ": objectContains.spec.template.spec.containers[0] (-want +got):\n" +
			"        - imagePullPolicy: Never\n" +
			"        - name: nginx\n" +
			"        + - image: nginx:1\n" +
			"        +   imagePullPolicy: Always\n" +
			"        +   name: nginx\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q; output:\n%s", want, text)
		}
	}
}

// FuzzObjectContains: an object equals itself and contains itself,
// whatever it holds, and checking never panics.
func FuzzObjectContains(f *testing.F) {
	f.Add(finalWeb)
	f.Add(`{"a": [1, 1.5, "x", null, true, {"b": []}], "c": {"d.e/f": null}}`)
	f.Add(`{"": [[[]]], "n": 1e300, "m": -0}`)
	f.Fuzz(func(t *testing.T, text string) {
		var v any
		if err := decodeJSON([]byte(text), &v); err != nil {
			return
		}
		if _, ok := v.(map[string]any); !ok {
			return
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return
		}
		doc := "apiVersion: vapkit.dev/v1alpha1\nkind: Expectation\nallow: true\nobject: " + string(raw) + "\nobjectContains: " + string(raw) + "\n"
		e, err := parseExpectationFile("x.yaml", []byte(doc))
		if err != nil {
			return // YAML reads some JSON texts otherwise (keys such as "<<")
		}
		for _, m := range e.check(admitted, &mutated{object: v, patch: []any{}}) {
			t.Errorf("%s is not contained by itself: %s:\n%s", raw, m.path, m.diff)
		}
	})
}
