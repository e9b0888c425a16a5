package reviewcmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

// exampleSuite is the replica-limit suite shipped with examples/review.
var exampleSuite = filepath.Join("..", "..", "review", "suites", "replica-limit.yaml")

func TestRunExampleSuite(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-format", "json", exampleSuite}, &out); err != nil {
		t.Fatalf("run() error = %v\n%s", err, out.String())
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if want := (summary{Total: 8, Passed: 8}); rep.Summary != want {
		t.Errorf("summary = %+v, want %+v", rep.Summary, want)
	}
}

const suiteHead = "apiVersion: vapkit.dev/v1alpha1\nkind: Suite\n"

// widgetCRD serves example.com/v1 Widget, whose spec.replicas is a
// required integer.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [replicas]
            properties:
              replicas: {type: integer}
`

const suitePolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE, DELETE], resources: [deployments, deployments/scale]}
  validations:
  - expression: "request.operation != 'DELETE'"
    message: "no deleting"
  - expression: "request.operation == 'DELETE' || object.spec.replicas <= 5"
    message: "at most 5 replicas"
  - expression: "!has(request.userInfo.username) || request.userInfo.username != 'mallory'"
    message: "not mallory"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replicas}
spec:
  policyName: replicas
  validationActions: [Deny]
`

const deployment = "{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: 3}}"

func TestSuiteRequests(t *testing.T) {
	t.Parallel()
	tests := `tests:
- name: create
  object: ` + deployment + `
  expect: {allow: true}
- name: update too many
  oldObject: ` + deployment + `
  object: {apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: 9}}
  expect: {deny: {message: {contains: at most 5 replicas}}}
- name: delete inferred
  oldObject: ` + deployment + `
  expect: {deny: {message: {contains: no deleting}}}
- name: user
  userInfo: {username: mallory}
  object: ` + deployment + `
  expect: {deny: {message: {contains: not mallory}}}
- name: scale subresource
  operation: UPDATE
  subResource: scale
  resource: {group: apps, version: v1, resource: deployments}
  object: {apiVersion: autoscaling/v1, kind: Scale, metadata: {name: web, namespace: default}, spec: {replicas: 9}}
  oldObject: {apiVersion: autoscaling/v1, kind: Scale, metadata: {name: web, namespace: default}, spec: {replicas: 1}}
  expect: {deny: {message: {contains: at most 5 replicas}}}
- name: skipped
  object: ` + deployment + `
  expect: {skip: later}
`
	dir := writeDir(t, map[string]string{
		"suite.yaml":  suiteHead + "policies: [policy.yaml]\n" + tests,
		"policy.yaml": suitePolicy,
	})
	var out bytes.Buffer
	err := run(t.Context(), []string{"-format", "json", dir}, &out)
	if err != nil {
		t.Fatalf("run() error = %v\n%s", err, out.String())
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	// policy.yaml is used by the suite, so it is not a case of its own.
	if len(rep.Suites) != 1 || rep.Summary != (summary{Total: 6, Passed: 5, Skipped: 1}) {
		t.Errorf("suites = %d, summary = %+v; want 1 suite, 5 passed, 1 skipped\n%s", len(rep.Suites), rep.Summary, out.String())
	}
	// -run keeps the tests whose name matches.
	out.Reset()
	if err := run(t.Context(), []string{"-format", "json", "-run", "^delete", dir}, &out); err != nil {
		t.Fatalf("run(-run) error = %v", err)
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Summary != (summary{Total: 1, Passed: 1}) {
		t.Errorf("run(-run ^delete) summary = %+v, want one passed", rep.Summary)
	}
}

func TestTestOperation(t *testing.T) {
	t.Parallel()
	obj := &ObjectSource{File: "x"}
	tests := []struct {
		name string
		test SuiteTest
		want admissionv1.Operation
	}{
		{"object", SuiteTest{Object: obj}, admissionv1.Create},
		{"both", SuiteTest{Object: obj, OldObject: obj}, admissionv1.Update},
		{"oldObject", SuiteTest{OldObject: obj}, admissionv1.Delete},
		{"explicit", SuiteTest{Object: obj, Operation: "CONNECT"}, admissionv1.Connect},
	}
	for _, tc := range tests {
		if got, err := tc.test.operation(); err != nil || got != tc.want {
			t.Errorf("%s: operation() = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	if _, err := (&SuiteTest{Object: obj, Operation: "PATCH"}).operation(); err == nil {
		t.Error("operation(PATCH) error = nil, want an error")
	}
}

func TestSuiteErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{{
		name:  "unknown field",
		files: map[string]string{"s.yaml": suiteHead + "tests:\n- name: a\n  objekt: {}\n  expect: {allow: true}\n"},
		want:  "DIR/s.yaml:5: field objekt not found in type reviewcmd.SuiteTest",
	}, {
		name:  "bad expectation",
		files: map[string]string{"s.yaml": suiteHead + "tests:\n- name: a\n  object: " + deployment + "\n  expect: {deny: {code: 99}}\n"},
		want:  "DIR/s.yaml:6: tests[0].expect.deny.code: expected an HTTP status code, got int \"99\"",
	}, {
		name:  "no expectation",
		files: map[string]string{"s.yaml": suiteHead + "tests:\n- name: a\n  object: " + deployment + "\n"},
		want:  "DIR/s.yaml:4: tests[0].expect: required",
	}, {
		name:  "glob matching nothing",
		files: map[string]string{"s.yaml": suiteHead + "policies: [nothing/*.yaml]\ntests:\n- name: a\n  object: " + deployment + "\n  expect: {allow: true}\n"},
		want:  `DIR/s.yaml: policies[0]: "nothing/*.yaml" matches no file`,
	}, {
		name: "policy the server refuses",
		files: map[string]string{
			"s.yaml": suiteHead + "policies: [p.yaml]\ntests:\n- name: a\n  object: " + deployment + "\n  expect: {allow: true}\n",
			"p.yaml": strings.Replace(suitePolicy, "message: \"no deleting\"", "message: \"no deleting\"\n    reason: Unauthorized", 1),
		},
		want: `DIR/p.yaml:11: ValidatingAdmissionPolicy "replicas": spec.validations[0].reason: Unsupported value: "Unauthorized"`,
	}, {
		name: "misspelt field of an inline object",
		files: map[string]string{
			"s.yaml": suiteHead + "policies: [p.yaml]\ntests:\n- name: a\n  object:\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata: {name: web}\n    spec:\n      replica: 3\n  expect: {allow: true}\n",
			"p.yaml": suitePolicy,
		},
		want: `DIR/s.yaml:11: object: unknown field "spec.replica"`,
	}, {
		name: "custom resource its CRD's schema refuses",
		files: map[string]string{
			"s.yaml":   suiteHead + "policies: [p.yaml]\ncrds: [crd.yaml]\ntests:\n- name: a\n  object:\n    apiVersion: example.com/v1\n    kind: Widget\n    metadata: {name: w, namespace: default}\n    spec:\n      replicas: \"3\"\n  expect: {allow: true}\n",
			"p.yaml":   suitePolicy,
			"crd.yaml": widgetCRD,
		},
		want: "DIR/s.yaml:8: object: the API server would refuse this Widget (422 Invalid: Widget.example.com \"w\" is invalid):\n" +
			`DIR/s.yaml:12: object: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`,
	}, {
		name: "custom resource in a file",
		files: map[string]string{
			"s.yaml":   suiteHead + "policies: [p.yaml]\ncrds: [crd.yaml]\ntests:\n- name: a\n  object: w.yaml\n  expect: {allow: true}\n",
			"p.yaml":   suitePolicy,
			"crd.yaml": widgetCRD,
			"w.yaml":   "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\nspec: {}\n",
		},
		want: "DIR/s.yaml:7: object (w.yaml): spec.replicas: Required value",
	}, {
		name: "updated custom resource: a new invalid value is refused",
		files: map[string]string{
			"s.yaml":   suiteHead + "policies: [p.yaml]\ncrds: [crd.yaml]\ntests:\n- name: a\n  oldObject: {apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: default}, spec: {}}\n  object: {apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: default}, spec: {replicas: x}}\n  expect: {allow: true}\n",
			"p.yaml":   suitePolicy,
			"crd.yaml": widgetCRD,
		},
		want: `DIR/s.yaml:8: object: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`,
	}, {
		name: "subresource without resource",
		files: map[string]string{
			"s.yaml": suiteHead + "policies: [p.yaml]\ntests:\n- name: a\n  subResource: scale\n  object: " + deployment + "\n  expect: {allow: true}\n",
			"p.yaml": suitePolicy,
		},
		want: `DIR/s.yaml:5: resource is required with a subResource or operation CONNECT`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeDir(t, tc.files)
			var out bytes.Buffer
			err := run(t.Context(), []string{"-format", "json", filepath.Join(dir, "s.yaml")}, &out)
			if exitCode(err) != 1 {
				t.Errorf("exitCode(%v) = %d, want 1", err, exitCode(err))
			}
			var rep report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			want := strings.ReplaceAll(tc.want, "DIR/", dir+string(filepath.Separator))
			var errs []string
			for _, s := range rep.Suites {
				for _, c := range s.Cases {
					if c.Status == statusError {
						errs = append(errs, c.Error)
					}
				}
			}
			if len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), want) {
				t.Errorf("errors = %q, want one containing %q", errs, want)
			}
		})
	}
}

// FuzzLoadSuite checks that reading any suite text never panics and that
// a suite it accepts has named tests with expectations.
func FuzzLoadSuite(f *testing.F) {
	if data, err := os.ReadFile(exampleSuite); err == nil {
		f.Add(string(data))
	}
	f.Add(suiteHead + "tests:\n- name: a\n  object: x.yaml\n  expect: {deny: {message: {regexp: '^a'}, code: 403}}\n")
	f.Add(suiteHead + "tests: [{name: a, oldObject: {apiVersion: v1, kind: Pod}, expect: {skip: later}}]\n")
	f.Add(suiteHead + "tests:\n- &a {name: a, object: x, expect: {allow: true}}\n- *a\n")
	if data, err := os.ReadFile(mutatingSuite); err == nil {
		f.Add(string(data))
	}
	f.Add(suiteHead + "tests: [{name: a, object: x, expect: {allow: true, object: null, objectContains: {a: [1, {b: null}]}, patch: [{op: test, path: /a, value: 1}]}}]\n")
	f.Fuzz(func(t *testing.T, text string) {
		// The globs resolve in an empty directory: they match nothing.
		ls, err := parseSuite([]byte(text), filepath.Join(os.DevNull, "s.yaml"))
		if err != nil {
			return
		}
		for _, tc := range ls.suite.Tests {
			if tc.Name == "" || tc.Expect == nil || tc.Expect.e == nil || (tc.Object == nil && tc.OldObject == nil) {
				t.Errorf("accepted an incomplete test %+v", tc)
			}
		}
	})
}

// TestSuiteCustomResources: valid custom resources run, and an update
// that keeps an invalid value the stored object already held runs too, as
// the API server ratchets it.
func TestSuiteCustomResources(t *testing.T) {
	t.Parallel()
	w := func(spec string) string {
		return "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: default}, spec: " + spec + "}"
	}
	tests := "tests:\n" +
		"- name: create\n  object: " + w("{replicas: 3}") + "\n  expect: {allow: true}\n" +
		"- name: ratcheted update\n  oldObject: " + w("{replicas: x}") + "\n  object: {apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: default, labels: {a: b}}, spec: {replicas: x}}\n  expect: {allow: true}\n" +
		"- name: update\n  oldObject: " + w("{replicas: 1}") + "\n  object: " + w("{replicas: 2}") + "\n  expect: {allow: true}\n" +
		"- name: delete of an invalid object\n  oldObject: " + w("{}") + "\n  expect: {allow: true}\n"
	dir := writeDir(t, map[string]string{
		"suite.yaml":  suiteHead + "policies: [policy.yaml]\ncrds: [crd.yaml]\n" + tests,
		"policy.yaml": suitePolicy,
		"crd.yaml":    widgetCRD,
	})
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-format", "json", dir}, &out); err != nil {
		t.Fatalf("run() error = %v\n%s", err, out.String())
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Summary != (summary{Total: 4, Passed: 4}) {
		t.Errorf("summary = %+v, want 4 passed\n%s", rep.Summary, out.String())
	}
}
