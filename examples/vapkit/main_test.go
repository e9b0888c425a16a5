package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var (
	exampleSuite = filepath.Join("..", "review", "suites", "replica-limit.yaml")
	failingCases = filepath.Join("..", "internal", "reviewcmd", "testdata", "failing")
	quickstart   = filepath.Join("..", "quickstart", "cluster.yaml")
)

func TestExitStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no command", nil, 2},
		{"unknown command", []string{"frobnicate"}, 2},
		{"help", []string{"help"}, 0},
		{"suite passes", []string{"test", exampleSuite}, 0},
		{"a test fails", []string{"test", failingCases}, 1},
		{"missing path", []string{"test", "no/such/dir"}, 2},
		{"bad flag", []string{"test", "-format", "xml", exampleSuite}, 2},
		{"no match for -run", []string{"test", "-run", "^nothing$", exampleSuite}, 2},
		{"test -h", []string{"test", "-h"}, 0},
		{"eval", []string{"eval", filepath.Join(failingCases, "replicas.yaml")}, 0},
		{"eval two files", []string{"eval", quickstart, quickstart}, 2},
		{"typecheck", []string{"typecheck", quickstart}, 0},
		{"init", []string{"init", quickstart}, 0},
		{"init without file", []string{"init"}, 2},
		{"audit without flags", []string{"audit"}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			if got := run(t.Context(), tc.args, &out, &errOut); got != tc.want {
				t.Errorf("run(%q) = %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.args, got, tc.want, out.String(), errOut.String())
			}
		})
	}
}

func TestTestOutput(t *testing.T) {
	t.Parallel()
	// Without -v only what did not pass is listed, as go test does.
	var out bytes.Buffer
	if code := run(t.Context(), []string{"test", exampleSuite}, &out, &bytes.Buffer{}); code != 0 {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	if strings.Contains(out.String(), "--- PASS") || !strings.Contains(out.String(), "ok  \t"+exampleSuite+"\t8 passed (Kubernetes 1.37)\n") {
		t.Errorf("quiet output:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "coverage of "+exampleSuite) {
		t.Errorf("output lacks the coverage table:\n%s", out.String())
	}
	// -v lists every test with its decision.
	out.Reset()
	run(t.Context(), []string{"test", "-v", "-run", "only warn", exampleSuite}, &out, &bytes.Buffer{})
	for _, want := range []string{
		"--- PASS: two hundred replicas in prod only warn and audit\n    allowed\n    warning: Validation failed for ValidatingAdmissionPolicy 'replicalimit-policy.example.com'",
		"ok  \t" + exampleSuite + "\t1 passed",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-v output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestTestJUnitOnFailure(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if code := run(t.Context(), []string{"test", "-format", "junit", failingCases}, &out, &bytes.Buffer{}); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Failures int      `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("not valid XML: %v\n%s", err, out.String())
	}
	if doc.Failures != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 1 || doc.Suites[0].Cases[0].Failure == nil {
		t.Errorf("JUnit = %+v, want one failed case", doc)
	}
}

func TestInitWritesARunnableSuite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policyFile := filepath.Join(dir, "cluster.yaml")
	data, err := os.ReadFile(quickstart)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policyFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var suite, errOut bytes.Buffer
	if code := run(t.Context(), []string{"init", policyFile}, &suite, &errOut); code != 0 {
		t.Fatalf("init: exit %d: %s", code, errOut.String())
	}
	suiteFile := filepath.Join(dir, "cluster.suite.yaml")
	if err := os.WriteFile(suiteFile, suite.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	// The skeleton parses and runs: its tests are to be filled in, so
	// some fail, but none is an error.
	var out bytes.Buffer
	code := run(t.Context(), []string{"test", "-format", "json", suiteFile}, &out, &errOut)
	var rep struct {
		Summary struct{ Total, Errors int }
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("exit %d, %v:\n%s\n%s", code, err, out.String(), errOut.String())
	}
	if rep.Summary.Total != 4 || rep.Summary.Errors != 0 {
		t.Errorf("summary = %+v, want 4 tests (an allow and a deny per policy) and no errors\n%s", rep.Summary, out.String())
	}
	if !strings.Contains(suite.String(), `message: {contains: "failed expression: object.spec.replicas <= 5"}`) {
		t.Errorf("skeleton lacks the deny message of demo-policy:\n%s", suite.String())
	}
}
