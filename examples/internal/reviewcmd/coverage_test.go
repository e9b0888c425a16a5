package reviewcmd

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const coveragePolicies = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  failurePolicy: Ignore
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  matchConditions:
  - {name: not-system, expression: "object.metadata.name != 'system'"}
  variables:
  - {name: replicas, expression: "object.spec.replicas"}
  validations:
  - expression: "variables.replicas <= 5"
  - expression: "object.spec.template.spec.containers[0].image != 'bad'"
  auditAnnotations:
  - {key: big, valueExpression: "variables.replicas > 3 ? 'yes' : ''"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: everywhere}
spec: {policyName: p, validationActions: [Deny]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: labelled-only}
spec:
  policyName: p
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {nobody: here}}
`

func TestSuiteCoverage(t *testing.T) {
	t.Parallel()
	dep := func(name string, replicas int, containers string) string {
		return "{apiVersion: apps/v1, kind: Deployment, metadata: {name: " + name + "}, spec: {replicas: " + string(rune('0'+replicas)) + containers + "}}"
	}
	suiteText := suiteHead + "policies: [p.yaml]\ntests:\n" +
		"- {name: small, object: " + dep("a", 2, ", template: {spec: {containers: [{name: c, image: good}]}}") + ", expect: {allow: true}}\n" +
		"- {name: big, object: " + dep("b", 7, ", template: {spec: {containers: [{name: c, image: good}]}}") + ", expect: {deny: true}}\n" +
		"- {name: no containers, object: " + dep("c", 4, "") + ", expect: {allow: true}}\n" +
		"- {name: system, object: " + dep("system", 9, "") + ", expect: {allow: true}}\n"
	dir := writeDir(t, map[string]string{"s.yaml": suiteText, "p.yaml": coveragePolicies})
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-format", "json", filepath.Join(dir, "s.yaml")}, &out); err != nil {
		t.Fatalf("run() error = %v\n%s", err, out.String())
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	want := []*coverage{{
		Suite: filepath.Join(dir, "s.yaml"),
		Policies: []policyCoverage{{
			Policy: "p",
			Expressions: []expressionCoverage{
				{Path: "spec.matchConditions[0].expression", Traced: true, True: 3, False: 1},
				// Read by the validation and audit annotation of the
				// three tests past the match condition: an int, counted
				// once per test.
				{Path: "spec.variables[0].expression", Traced: true, True: 3},
				{Path: "spec.validations[0].expression", Traced: true, True: 2, False: 1},
				// The third test has no containers: an error, ignored
				// under failurePolicy Ignore.
				{Path: "spec.validations[1].expression", Traced: true, True: 2, Error: 1},
				{Path: "spec.auditAnnotations[0].valueExpression", Traced: true, True: 2, False: 1},
			},
			Bindings: []bindingCoverage{{Binding: "everywhere", Matched: 3}, {Binding: "labelled-only"}},
		}},
	}}
	if diff := cmp.Diff(want, rep.Coverage); diff != "" {
		t.Errorf("coverage mismatch (-want +got):\n%s", diff)
	}
	out.Reset()
	if err := run(t.Context(), []string{filepath.Join(dir, "s.yaml")}, &out); err != nil {
		t.Fatalf("run() error = %v", err)
	}
	var rows []string
	for line := range strings.Lines(out.String()) {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	for _, row := range []string{
		"POLICY EXPRESSION TRUE FALSE ERROR",
		"p spec.validations[1].expression 2 0 1",
		"p spec.variables[0].expression 3 0 0",
		"p binding labelled-only never matched",
	} {
		if !slices.Contains(rows, row) {
			t.Errorf("text output lacks the row %q:\n%s", row, out.String())
		}
	}
}

// TestSuiteCoverageVariables: a boolean variable counts true and false, an
// erroring one error, and one no expression reads is never evaluated.
func TestSuiteCoverageVariables(t *testing.T) {
	t.Parallel()
	policies := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: v}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  variables:
  - {name: labelled, expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"}
  - {name: team, expression: "object.metadata.labels['team']"}
  - {name: unused, expression: "true"}
  validations:
  - expression: "variables.labelled ? variables.team != '' : true"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: all}
spec: {policyName: v, validationActions: [Deny]}
`
	cm := func(name, labels string) string {
		return "{apiVersion: v1, kind: ConfigMap, metadata: {name: " + name + labels + "}}"
	}
	suiteText := suiteHead + "policies: [p.yaml]\ntests:\n" +
		"- {name: labelled, object: " + cm("a", ", labels: {team: x}") + ", expect: {allow: true}}\n" +
		"- {name: unlabelled, object: " + cm("b", "") + ", expect: {allow: true}}\n"
	dir := writeDir(t, map[string]string{"s.yaml": suiteText, "p.yaml": policies})
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-format", "json", filepath.Join(dir, "s.yaml")}, &out); err != nil {
		t.Fatalf("run() error = %v\n%s", err, out.String())
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	want := []*coverage{{
		Suite: filepath.Join(dir, "s.yaml"),
		Policies: []policyCoverage{{
			Policy: "v",
			Expressions: []expressionCoverage{
				{Path: "spec.variables[0].expression", Traced: true, True: 1, False: 1},
				{Path: "spec.variables[1].expression", Traced: true, True: 1},
				{Path: "spec.variables[2].expression", Traced: true},
				{Path: "spec.validations[0].expression", Traced: true, True: 2},
			},
			Bindings: []bindingCoverage{{Binding: "all", Matched: 2}},
		}},
	}}
	if diff := cmp.Diff(want, rep.Coverage); diff != "" {
		t.Errorf("coverage mismatch (-want +got):\n%s", diff)
	}

	// A variable that errors: the label is missing.
	erring := strings.Replace(policies, "variables.labelled ? variables.team != '' : true", "variables.team != ''", 1)
	suiteText = suiteHead + "policies: [p.yaml]\ntests:\n" +
		"- {name: unlabelled, object: " + cm("b", "") + ", expect: {deny: true}}\n"
	dir = writeDir(t, map[string]string{"s.yaml": suiteText, "p.yaml": erring})
	out.Reset()
	if err := run(t.Context(), []string{filepath.Join(dir, "s.yaml")}, &out); err != nil {
		t.Fatalf("run() error = %v\n%s", err, out.String())
	}
	var rows []string
	for line := range strings.Lines(out.String()) {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	for _, row := range []string{
		"v spec.variables[0].expression 0 0 0 never evaluated",
		"v spec.variables[1].expression 0 0 1",
		"v spec.variables[2].expression 0 0 0 never evaluated",
		"v spec.validations[0].expression 0 0 1",
	} {
		if !slices.Contains(rows, row) {
			t.Errorf("text output lacks the row %q:\n%s", row, out.String())
		}
	}
}
