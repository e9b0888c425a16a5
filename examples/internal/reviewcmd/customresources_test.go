package reviewcmd

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// widgetCase is a case file whose cluster serves Widget (widgetCRD) and
// holds one Widget; %PARAM% and %OBJECT% are the spec of the stored
// Widget and of the request's.
const widgetCase = widgetCRD + `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: widgets}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["example.com"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["widgets"]}
  validations:
  - expression: "object.spec.replicas < 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: widgets}
spec:
  policyName: widgets
  validationActions: [Deny]
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: stored, namespace: default}
spec: %PARAM%
---
apiVersion: v1
kind: Namespace
metadata: {name: default}
---
apiVersion: admission.k8s.io/v1
kind: AdmissionReview
request:
  uid: 0a000000-0000-0000-0000-000000000001
  kind: {group: example.com, version: v1, kind: Widget}
  resource: {group: example.com, version: v1, resource: widgets}
  name: w
  namespace: default
  operation: CREATE
  userInfo: {username: alice}
  object:
    apiVersion: example.com/v1
    kind: Widget
    metadata: {name: w, namespace: default}
    spec:
      replicas: %OBJECT%
---
` + expectHead + "allow: true\n"

// TestRunCaseCustomResources: a case whose custom resources (a stored one,
// or the request's object) their CRD's schema refuses is an error naming
// the line of the field; -stored evaluates it and lists the refusals.
func TestRunCaseCustomResources(t *testing.T) {
	caseOf := func(param, object string) string {
		return strings.NewReplacer("%PARAM%", param, "%OBJECT%", object).Replace(widgetCase)
	}
	tests := []struct {
		name, param, object string
		want                []string
	}{
		{"valid", "{replicas: 1}", "1", nil},
		{"stored object", "{}", "1", []string{`DIR/x.yaml:42: Widget "stored": spec.replicas: Required value`}},
		{"request's object", "{replicas: 1}", `"1"`, []string{
			`DIR/x.yaml:63: AdmissionReview: request.object: Widget "w": spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeDir(t, map[string]string{"x.yaml": caseOf(tc.param, tc.object)})
			for _, stored := range []bool{false, true} {
				args := []string{"-format", "json", dir}
				if stored {
					args = append([]string{"-stored"}, args...)
				}
				var out bytes.Buffer
				err := run(t.Context(), args, &out)
				var rep report
				if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil {
					t.Fatalf("%v: %v\n%s", err, jerr, out.String())
				}
				c := rep.Suites[0].Cases[0]
				var want []string
				for _, w := range tc.want {
					want = append(want, strings.ReplaceAll(w, "DIR/", dir+string(filepath.Separator)))
				}
				if strings.Join(c.Refusals, "\n") != strings.Join(want, "\n") {
					t.Errorf("stored=%v: refusals\n%s\nwant\n%s", stored, strings.Join(c.Refusals, "\n"), strings.Join(want, "\n"))
				}
				switch {
				case len(want) == 0 || stored:
					if c.Status == statusError {
						t.Errorf("stored=%v: status %s: %s", stored, c.Status, c.Error)
					}
				case c.Status != statusError || !strings.Contains(c.Error, want[0]):
					t.Errorf("status %s, error %q; want an error with %q", c.Status, c.Error, want[0])
				}
			}
		})
	}
}

// TestSuiteStoredCustomResources: a suite file holding a custom resource
// its CRD refuses is an error naming the line of the field.
func TestSuiteStoredCustomResources(t *testing.T) {
	t.Parallel()
	dir := writeDir(t, map[string]string{
		"s.yaml":      suiteHead + "policies: [p.yaml, stored.yaml]\ncrds: [crd.yaml]\ntests:\n- name: a\n  object: " + deployment + "\n  expect: {allow: true}\n",
		"p.yaml":      suitePolicy,
		"crd.yaml":    widgetCRD,
		"stored.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: stored, namespace: default}\nspec:\n  replicas: 1.5\n",
	})
	var out bytes.Buffer
	err := run(t.Context(), []string{"-format", "json", filepath.Join(dir, "s.yaml")}, &out)
	if exitCode(err) != 1 {
		t.Errorf("exitCode(%v) = %d, want 1", err, exitCode(err))
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "stored.yaml") + `:5: Widget "stored": spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number"`
	if c := rep.Suites[0].Cases[0]; c.Status != statusError || !strings.Contains(c.Error, want) {
		t.Errorf("status %s, error %q; want an error with %q", c.Status, c.Error, want)
	}
}

// defaultReplicas is a mutating policy that gives every created Widget
// spec.replicas: 1.
const defaultReplicas = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: default-replicas}
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - {apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [widgets]}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: "Object{spec: Object.spec{replicas: 1}}"
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: default-replicas}
spec:
  policyName: default-replicas
`

// TestSuiteMutatedCustomResources: the API server validates a custom
// resource after mutating admission, so a suite with mutating policies
// does not refuse the object as written (here the mutation adds the
// required field).
func TestSuiteMutatedCustomResources(t *testing.T) {
	t.Parallel()
	dir := writeDir(t, map[string]string{
		"s.yaml": suiteHead + "policies: [p.yaml, m.yaml]\ncrds: [crd.yaml]\ntests:\n- name: a\n" +
			"  object: {apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: default}, spec: {}}\n" +
			"  expect: {allow: true, objectContains: {spec: {replicas: 1}}}\n",
		"p.yaml":   suitePolicy,
		"m.yaml":   defaultReplicas,
		"crd.yaml": widgetCRD,
	})
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-format", "json", filepath.Join(dir, "s.yaml")}, &out); err != nil {
		t.Fatalf("run() error = %v\n%s", err, out.String())
	}
}
