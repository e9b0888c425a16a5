package reviewcmd

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunNeverPassesARefusedCase holds one test per lie of issue 18: a case
// the API server would refuse is an error (exit 1), never a pass, and the
// error names the file, the line and the field path.
func TestRunNeverPassesARefusedCase(t *testing.T) {
	t.Parallel()
	denied := readCase(t, "replicas-denied.yaml")
	tests := []struct {
		name   string
		caseIn string
		expect string
		want   []string
	}{{
		name:   "CEL that does not compile, deny expected",
		caseIn: strings.Replace(denied, `"object.spec.replicas <= 5"`, `"object.spec.replicas <= "`, 1),
		expect: "deny: true\n",
		want:   []string{`DIR/x.yaml:12: ValidatingAdmissionPolicy "replicas": spec.validations[0].expression: Invalid value: "object.spec.replicas <= ": compilation failed: `},
	}, {
		name:   "binding naming a policy that does not exist, allow expected",
		caseIn: strings.Replace(denied, "policyName: replicas\n", "policyName: replica\n", 1),
		expect: "allow: true\n",
		want:   []string{`DIR/x.yaml:22: ValidatingAdmissionPolicyBinding "replicas-binding": spec.policyName: Not found: "replica"`},
	}, {
		name:   "policy written as admissionregistration.k8s.io/v2, allow expected",
		caseIn: strings.Replace(denied, "admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\n", "admissionregistration.k8s.io/v2\nkind: ValidatingAdmissionPolicy\n", 1),
		expect: "allow: true\n",
		want:   []string{`DIR/x.yaml:4: document 1 (ValidatingAdmissionPolicy/replicas): no matches for kind "ValidatingAdmissionPolicy" in version "admissionregistration.k8s.io/v2"`},
	}, {
		name:   "misspelt field of the Deployment",
		caseIn: strings.Replace(denied, "      replicas: 7\n", "      replica: 7\n", 1),
		expect: "allow: true\n",
		want:   []string{`DIR/x.yaml:44: document 4 (AdmissionReview): unknown field "request.object.spec.replica"`},
	}, {
		name:   "Deny with Warn",
		caseIn: strings.Replace(denied, "validationActions: [Deny, Audit]", "validationActions: [Deny, Warn]", 1),
		expect: "deny: true\n",
		want:   []string{`DIR/x.yaml:23: ValidatingAdmissionPolicyBinding "replicas-binding": spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.caseIn == denied {
				t.Fatal("the replacement did not apply")
			}
			dir := writeDir(t, map[string]string{"x.yaml": tc.caseIn, "x.expect.yaml": expectHead + tc.expect})
			var out bytes.Buffer
			err := run(t.Context(), []string{"-format", "json", dir}, &out)
			if exitCode(err) != 1 {
				t.Errorf("exitCode(%v) = %d, want 1", err, exitCode(err))
			}
			var rep report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			c := rep.Suites[0].Cases[0]
			if c.Status != statusError {
				t.Errorf("status = %s, want %s (distinct from a failed expectation)", c.Status, statusError)
			}
			for _, w := range tc.want {
				w = strings.ReplaceAll(w, "DIR/", dir+string(filepath.Separator))
				if !strings.Contains(c.Error, w) {
					t.Errorf("error = %q, want it to contain %q", c.Error, w)
				}
			}
		})
	}
}

// TestReviewOneReportsRefusals checks that printing one case still answers
// as the API server does for stored objects, and says on stderr what it
// would have refused at creation.
func TestReviewOneReportsRefusals(t *testing.T) {
	t.Parallel()
	denied := strings.Replace(readCase(t, "replicas-denied.yaml"), "validationActions: [Deny, Audit]", "validationActions: [Deny, Warn]", 1)
	denied = strings.Replace(denied, "      replicas: 7\n", "      replicas: 7\n      replica: 7\n", 1)
	dir := writeDir(t, map[string]string{"x.yaml": denied})
	var out, stderr bytes.Buffer
	if err := runWith(t.Context(), []string{filepath.Join(dir, "x.yaml")}, &out, &stderr); err != nil {
		t.Fatalf("runWith() error = %v", err)
	}
	if !strings.Contains(out.String(), `"allowed": false`) || !strings.Contains(out.String(), "Validation failed for ValidatingAdmissionPolicy 'replicas'") {
		t.Errorf("stdout lacks the stored objects' answer (a denial with a warning):\n%s", out.String())
	}
	for _, want := range []string{
		`x.yaml:45: document 4 (AdmissionReview): unknown field "request.object.spec.replica"`,
		`x.yaml:23: ValidatingAdmissionPolicyBinding "replicas-binding": spec.validationActions: Invalid value: ["Deny","Warn"]`,
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}
