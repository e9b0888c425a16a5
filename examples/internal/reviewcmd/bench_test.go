package reviewcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/policy/casefile"
)

// writeBenchSuite writes a suite of tests tests over policies policies,
// each with exprs validations, into dir and returns the suite file. Every
// policy matches Deployments labelled with its own team, so each test is
// decided by one policy while every policy's bindings are considered.
func writeBenchSuite(tb testing.TB, dir string, policies, exprs, tests int) string {
	tb.Helper()
	var p strings.Builder
	for i := range policies {
		fmt.Fprintf(&p, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p%d}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
    objectSelector: {matchLabels: {team: t%d}}
  validations:
`, i, i)
		for j := range exprs {
			fmt.Fprintf(&p, "  - expression: \"object.spec.replicas <= %d\"\n    message: \"at most %d replicas (%d)\"\n", 5+j, 5+j, j)
		}
		fmt.Fprintf(&p, `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: p%d}
spec: {policyName: p%d, validationActions: [Deny]}
---
`, i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "policies.yaml"), []byte(p.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	var s strings.Builder
	s.WriteString(suiteHead + "policies: [policies.yaml]\ntests:\n")
	for i := range tests {
		replicas, expect := 3, "{allow: true}"
		if i%2 == 1 {
			replicas, expect = 9, "{deny: {message: {contains: \"at most 5 replicas\"}, code: 422}}"
		}
		fmt.Fprintf(&s, "- name: t%d\n  object: {apiVersion: apps/v1, kind: Deployment, metadata: {name: d%d, namespace: ns%d, labels: {team: t%d}}, spec: {replicas: %d}}\n  expect: %s\n",
			i, i, i%7, i%policies, replicas, expect)
	}
	file := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(file, []byte(s.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	return file
}

// BenchmarkSuite runs a suite of 1,000 tests over 100 policies end to end:
// reading and checking the suite, compiling the policies once, running the
// tests and measuring coverage.
func BenchmarkSuite(b *testing.B) {
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, exprs := range []int{1, 5} {
		b.Run(fmt.Sprintf("1000tests/100policies/%dexprs", exprs), func(b *testing.B) {
			file := writeBenchSuite(b, b.TempDir(), 100, exprs, 1000)
			r := &runner{opts: casefile.Options{Env: env}, parallel: defaultParallel()}
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				ls, err := loadSuite(file)
				if err != nil {
					b.Fatal(err)
				}
				s, cov := r.runSuiteFile(b.Context(), ls, nil)
				if s.Summary.Passed != 1000 || cov == nil {
					b.Fatalf("summary = %+v, want 1000 passed\n%+v", s.Summary, s.Cases[0])
				}
			}
			// CPU time of the process per run: on a loaded machine wall
			// time (ns/op) includes the time other processes held the
			// cores; this does not.
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
