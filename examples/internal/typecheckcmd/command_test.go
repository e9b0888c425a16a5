package typecheckcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const validPolicy = `# leading comment
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replicas
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.replicas > 1"
`

const rejectedPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: broken
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas > 1"
  - expression: "object.spec.replicas >"
`

const mutatingPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: scale
spec:
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: "Object{spec: Object.spec{replica: 2}}"
`

func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	valid := write("valid.yaml", validPolicy)
	rejected := write("rejected.yaml", rejectedPolicy)
	mutating := write("mutating.yaml", mutatingPolicy)
	tests := []struct {
		name     string
		files    []string
		wantCode int
		want     []string
		wantNot  []string
	}{
		{name: "warnings only", files: []string{valid}, wantCode: 0, want: []string{
			"policy: replicas",
			"rejected: false",
			"source: " + valid + ":2",
			"    - fieldRef: spec.validations[0].expression\n      warning: |\n        apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'replicas'\n         | object.replicas > 1\n         | ......^\n",
			valid + ":14: spec.validations[0].expression",
		}},
		{name: "rejected", files: []string{valid, rejected}, wantCode: 1, want: []string{
			"---\n",
			"rejected: true",
			rejected + ":14: spec.validations[1].expression: Invalid value:",
		}},
		{name: "mutating policy: vapkit's warnings, no status", files: []string{mutating}, wantCode: 0, want: []string{
			"kind: MutatingAdmissionPolicy\npolicy: scale\nrejected: false\nsource: " + mutating + ":1\nvapkitMutatingWarnings:\n" +
				"- fieldRef: spec.mutations[0].applyConfiguration.expression\n  warning: |\n    apps/v1, Kind=Deployment: ERROR: <input>:1:33: field \"replica\" is not a property of Object.spec in the schema\n",
			mutating + ":16: spec.mutations[0].applyConfiguration.expression",
		}, wantNot: []string{"status:"}},
		{name: "no files", wantCode: 2},
		{name: "missing file", files: []string{filepath.Join(dir, "nope.yaml")}, wantCode: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			code, _ := run(tc.files, &out)
			if code != tc.wantCode {
				t.Errorf("run(%v) = %d, want %d; output:\n%s", tc.files, code, tc.wantCode, out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("run(%v) output lacks %q; got:\n%s", tc.files, w, out.String())
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(out.String(), w) {
					t.Errorf("run(%v) output holds %q; got:\n%s", tc.files, w, out.String())
				}
			}
		})
	}
}

func TestSplitPath(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{in: "spec.validations[0].expression", want: "spec|validations|[0]|expression"},
		{in: "spec.matchConstraints.resourceRules[1].apiGroups[0]", want: "spec|matchConstraints|resourceRules|[1]|apiGroups|[0]"},
		{in: "metadata.name", want: "metadata|name"},
		{in: "", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := strings.Join(splitPath(tc.in), "|"); got != tc.want {
				t.Errorf("splitPath(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
