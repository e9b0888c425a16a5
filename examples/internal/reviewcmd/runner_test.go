package reviewcmd

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var sharedCases = filepath.Join("..", "..", "..", "policy", "testdata", "cases")

// readCase returns a case of testdata/cases.
func readCase(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "cases", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// writeDir writes files (name to content) into a new temporary directory.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const expectHead = "apiVersion: vapkit.dev/v1alpha1\nkind: Expectation\n"

// failingDir holds one passing case, two failing ones (an Expectation and
// an expected file) and one that cannot be run.
func failingDir(t *testing.T) string {
	denied := readCase(t, "replicas-denied.yaml")
	expected, err := os.ReadFile(filepath.Join(sharedCases, "actions-deny-warn-audit.expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	shared, err := os.ReadFile(filepath.Join(sharedCases, "actions-deny-warn-audit.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return writeDir(t, map[string]string{
		"a-pass.yaml":        denied,
		"a-pass.expect.yaml": expectHead + "deny:\n  message: {contains: at most 5 replicas}\n",
		"b-fail.yaml":        denied,
		"b-fail.expect.yaml": expectHead + "deny:\n  message: {contains: at most 3 replicas}\n  code: 403\n",
		"c-json.yaml":        string(shared),
		"c-json.expected.json": strings.ReplaceAll(string(expected),
			"at most 5 replicas", "at most 4 replicas"),
		"d-broken.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: [}\n",
	})
}

func TestRunSharedCases(t *testing.T) {
	t.Parallel()
	files := sharedCaseFiles(t)
	// A directory of the representative cases and their expected files.
	copies := map[string]string{}
	for _, f := range files {
		for _, name := range []string{f, strings.TrimSuffix(f, ".yaml") + ".expected.json"} {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			copies[filepath.Base(name)] = string(data)
		}
	}
	dir := writeDir(t, copies)
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-stored", "-format", "json", dir}, &out); err != nil {
		t.Fatalf("run() error = %v\n%s", err, out.String())
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	want := summary{Total: len(files), Passed: len(files)}
	if !rep.OK || rep.Summary != want {
		t.Errorf("report ok = %v, summary = %+v, want true, %+v", rep.OK, rep.Summary, want)
	}
	for _, s := range rep.Suites {
		for _, c := range s.Cases {
			if c.Status != statusPass {
				t.Errorf("case %s: status %s: %s %+v", c.Name, c.Status, c.Error, c.Failures)
			}
		}
	}
}

func TestRunExampleCasesText(t *testing.T) {
	var out bytes.Buffer
	dir := filepath.Join("testdata", "cases")
	if err := run(t.Context(), []string{dir}, &out); err != nil {
		t.Fatalf("run() error = %v", err)
	}
	want := "--- PASS: replicas-allowed\n" +
		"--- PASS: replicas-denied\n" +
		"--- SKIP: skipped\n" +
		"    waiting for the replica limit to move into params\n" +
		"PASS\n" +
		"ok  \t" + dir + "\t2 passed, 1 skipped (Kubernetes 1.37)\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output mismatch (-want +got):\n%s", diff)
	}
}

func TestRunFailingText(t *testing.T) {
	dir := failingDir(t)
	var out bytes.Buffer
	err := run(t.Context(), []string{"-stored", dir}, &out)
	var fe *failedError
	if !errors.As(err, &fe) {
		t.Fatalf("run() error = %v, want a *failedError", err)
	}
	if got := exitCode(err); got != 1 {
		t.Errorf("exitCode(%v) = %d, want 1", err, got)
	}
	if got, want := err.Error(), "3 of 4 cases failed"; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
	text := out.String()
	for _, want := range []string{
		"--- PASS: a-pass\n",
		"--- FAIL: b-fail\n" +
			"    " + filepath.Join(dir, "b-fail.expect.yaml") + ":4: deny.message (-want +got):\n" +
			"        - text containing \"at most 3 replicas\"\n" +
			"        + \"deployments.apps \\\"web\\\" is forbidden: ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding' denied request: at most 5 replicas\"\n" +
			"    " + filepath.Join(dir, "b-fail.expect.yaml") + ":5: deny.code (-want +got):\n" +
			"        - 403\n" +
			"        + 422\n",
		"--- FAIL: c-json\n    " + filepath.Join(dir, "c-json.expected.json") + ": response (-want +got):\n",
		"        -   \"message\": \"deployments.apps \\\"web\\\" is forbidden: ValidatingAdmissionPolicy 'replica-all-actions' with binding 'replica-all-actions-binding' denied request: at most 4 replicas\",\n" +
			"        +   \"message\": \"deployments.apps \\\"web\\\" is forbidden: ValidatingAdmissionPolicy 'replica-all-actions' with binding 'replica-all-actions-binding' denied request: at most 5 replicas\",\n",
		"--- ERROR: d-broken\n    " + filepath.Join(dir, "d-broken.yaml") + ":",
		": document 1: invalid YAML",
		"FAIL\nFAIL\t" + dir + "\t1 passed, 2 failed, 1 error (Kubernetes 1.37)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q; output:\n%s", want, text)
		}
	}
}

func TestRunJSONShape(t *testing.T) {
	dir := failingDir(t)
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-stored", "-format", "json", dir}, &out); err == nil {
		t.Fatal("run() error = nil, want failures")
	}
	var rep map[string]any
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("output is not one JSON document: %v\n%s", err, out.String())
	}
	if got, want := keys(rep), []string{"kubernetesVersion", "ok", "suites", "summary"}; !cmp.Equal(got, want) {
		t.Errorf("report keys = %v, want %v", got, want)
	}
	wantSummary := map[string]any{"total": 4.0, "passed": 1.0, "failed": 2.0, "errors": 1.0, "skipped": 0.0}
	if diff := cmp.Diff(wantSummary, rep["summary"]); diff != "" {
		t.Errorf("summary mismatch (-want +got):\n%s", diff)
	}
	if rep["ok"] != false || rep["kubernetesVersion"] != "1.37" {
		t.Errorf("ok, kubernetesVersion = %v, %v, want false, 1.37", rep["ok"], rep["kubernetesVersion"])
	}
	suites := rep["suites"].([]any)
	if len(suites) != 1 {
		t.Fatalf("%d suites, want 1", len(suites))
	}
	cases := suites[0].(map[string]any)["cases"].([]any)
	type shape struct {
		Name, Status string
		Keys         []string
	}
	var got []shape
	for _, c := range cases {
		m := c.(map[string]any)
		got = append(got, shape{Name: m["name"].(string), Status: m["status"].(string), Keys: keys(m)})
	}
	want := []shape{
		{"a-pass", "pass", []string{"expectation", "file", "name", "response", "status"}},
		{"b-fail", "fail", []string{"expectation", "failures", "file", "name", "response", "status"}},
		{"c-json", "fail", []string{"expectation", "failures", "file", "name", "refusals", "response", "status"}},
		{"d-broken", "error", []string{"error", "file", "name", "status"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cases mismatch (-want +got):\n%s", diff)
	}
	f := cases[1].(map[string]any)["failures"].([]any)[0].(map[string]any)
	if got, want := keys(f), []string{"diff", "field", "got", "location", "want"}; !cmp.Equal(got, want) {
		t.Errorf("failure keys = %v, want %v", got, want)
	}
	if f["field"] != "deny.message" || f["want"] != `text containing "at most 3 replicas"` {
		t.Errorf("failure = %v, want deny.message containing \"at most 3 replicas\"", f)
	}
}

func keys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// junitDoc is what the tests read back from JUnit output.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name       string `xml:"name,attr"`
		Tests      int    `xml:"tests,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// parseJUnit checks that data is well-formed XML (every token, strictly)
// and decodes it.
func parseJUnit(t *testing.T, data []byte) *junitDoc {
	t.Helper()
	if !bytes.HasPrefix(data, []byte(xml.Header)) {
		t.Errorf("JUnit output does not start with the XML header")
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("JUnit output is not well-formed XML: %v\n%s", err, data)
		}
	}
	var doc junitDoc
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("xml.Unmarshal() error = %v", err)
	}
	return &doc
}

func TestRunJUnit(t *testing.T) {
	// A policy message with markup, quotes, a CDATA terminator and a control
	// character, echoed in failure messages.
	nasty := strings.ReplaceAll(readCase(t, "replicas-denied.yaml"), `message: "at most 5 replicas"`,
		`message: "at <most> 5 & \"replicas\" ]]> \u0001 done"`)
	tests := []struct {
		name    string
		dir     func(t *testing.T) string
		wantErr bool
		// want lists per case: name, then "pass", "skip:MSG", "error" or
		// "failure:SUBSTRING".
		want [][2]string
		sum  [4]int // tests, failures, errors, skipped
	}{
		{
			name: "passing",
			dir:  func(*testing.T) string { return filepath.Join("testdata", "cases") },
			want: [][2]string{{"replicas-allowed", "pass"}, {"replicas-denied", "pass"}, {"skipped", "skip:waiting for the replica limit to move into params"}},
			sum:  [4]int{3, 0, 0, 1},
		},
		{
			name:    "failing",
			dir:     failingDir,
			wantErr: true,
			want:    [][2]string{{"a-pass", "pass"}, {"b-fail", "failure:deny.message: want text containing \"at most 3 replicas\""}, {"c-json", "failure:response: differs"}, {"d-broken", "error"}},
			sum:     [4]int{4, 2, 1, 0},
		},
		{
			name: "special characters",
			dir: func(t *testing.T) string {
				return writeDir(t, map[string]string{
					"x.yaml":        nasty,
					"x.expect.yaml": expectHead + "deny:\n  message: {exact: \"<&>\\\"]]>\"}\n",
					"y.yaml":        readCase(t, "replicas-denied.yaml"),
					"y.expect.yaml": expectHead + "skip: \"a <b> & \\u0001 ]]> \\\"c\\\"\"\n",
				})
			},
			wantErr: true,
			want: [][2]string{
				{"x", "failure:want \"<&>\\\"]]>\", got \"deployments.apps \\\"web\\\" is forbidden: ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding' denied request: at <most> 5 & \\\"replicas\\\" ]]> \\x01 done\""},
				// XML cannot hold U+0001: encoding/xml writes U+FFFD.
				{"y", "skip:a <b> & \uFFFD ]]> \"c\""},
			},
			sum: [4]int{2, 1, 0, 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(t.Context(), []string{"-stored", "-format", "junit", tc.dir(t)}, &out)
			if (err != nil) != tc.wantErr {
				t.Fatalf("run() error = %v, want error %v", err, tc.wantErr)
			}
			doc := parseJUnit(t, out.Bytes())
			if got := [4]int{doc.Tests, doc.Failures, doc.Errors, doc.Skipped}; got != tc.sum {
				t.Errorf("testsuites counts = %v, want %v", got, tc.sum)
			}
			if len(doc.Suites) != 1 {
				t.Fatalf("%d testsuites, want 1", len(doc.Suites))
			}
			s := doc.Suites[0]
			if len(s.Properties) != 1 || s.Properties[0].Name != "kubernetes-version" || s.Properties[0].Value != "1.37" {
				t.Errorf("properties = %+v, want kubernetes-version 1.37", s.Properties)
			}
			if len(s.Cases) != len(tc.want) {
				t.Fatalf("%d testcases, want %d", len(s.Cases), len(tc.want))
			}
			for i, c := range s.Cases {
				name, want := tc.want[i][0], tc.want[i][1]
				got := "pass"
				switch {
				case c.Failure != nil:
					got = "failure:" + c.Failure.Message
					if c.Failure.Text == "" {
						t.Errorf("case %s: failure has no text", c.Name)
					}
				case c.Error != nil:
					got = "error"
				case c.Skipped != nil:
					got = "skip:" + c.Skipped.Message
				}
				if c.Name != name || !strings.Contains(got, strings.TrimPrefix(want, "failure:")) || (got == "pass") != (want == "pass") {
					t.Errorf("testcase %d = %s %q, want %s %q", i, c.Name, got, name, want)
				}
			}
		})
	}
}

func TestRunKubernetesVersion(t *testing.T) {
	tests := []struct {
		version string
		stored  bool
		wantOK  bool
	}{
		{"1.37", false, true},
		{"1.34", false, true},
		// semver arrives in 1.33, but a 1.33 server compiles new
		// expressions as 1.32 does: it refuses to create the policy,
		// and evaluates it once stored.
		{"1.33", false, false},
		{"1.33", true, true},
		{"1.32", true, false},
		{"1.30", true, false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/stored=%v", tc.version, tc.stored), func(t *testing.T) {
			var out bytes.Buffer
			args := []string{"-kubernetes-version", tc.version, "-run", "^lib-semver$", sharedCases}
			if tc.stored {
				args = append([]string{"-stored"}, args...)
			}
			err := run(t.Context(), args, &out)
			if (err == nil) != tc.wantOK {
				t.Errorf("run(-kubernetes-version %s) error = %v, want ok %v\n%s", tc.version, err, tc.wantOK, out.String())
			}
			if want := "(Kubernetes " + tc.version + ")"; !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		})
	}
}

func TestRunInputErrors(t *testing.T) {
	denied := readCase(t, "replicas-denied.yaml")
	tests := []struct {
		name  string
		files map[string]string
		want  string // substring of the case error; "DIR" is the directory
	}{
		{
			name:  "no expectation",
			files: map[string]string{"x.yaml": denied},
			want:  "DIR/x.yaml: no expectation: add an Expectation document to the file, or a x.expect.yaml or x.expected.json next to it",
		},
		{
			name:  "two expectations",
			files: map[string]string{"x.yaml": denied + "---\n" + expectHead + "deny: true\n", "x.expect.yaml": expectHead + "deny: true\n"},
			want:  "DIR/x.yaml: more than one expectation (DIR/x.yaml, DIR/x.expect.yaml); keep one",
		},
		{
			name:  "two inline expectations",
			files: map[string]string{"x.yaml": denied + "---\n" + expectHead + "deny: true\n---\n" + expectHead + "deny: true\n"},
			want:  "DIR/x.yaml:54: document 6 (Expectation): a second Expectation; a case has at most one (the first is document 5)",
		},
		{
			name:  "bad inline expectation",
			files: map[string]string{"x.yaml": denied + "---\n# comment\n" + expectHead + "deny:\n  code: [403]\n"},
			want:  "DIR/x.yaml:54: document 5 (Expectation): deny.code: expected an HTTP status code, got a list",
		},
		{
			name:  "bad expectation file",
			files: map[string]string{"x.yaml": denied, "x.expect.yaml": expectHead + "deny: true\nwarnings: {a: b}\n"},
			want:  "DIR/x.expect.yaml:4: document 1 (Expectation): warnings: expected a list, got a mapping",
		},
		{
			name:  "bad expected file",
			files: map[string]string{"x.yaml": denied, "x.expected.json": "{\n  \"response\": {\n    \"allowed\": \"no\"\n  }\n}\n"},
			want:  "DIR/x.expected.json:3: json: cannot unmarshal",
		},
		{
			name:  "bad case file",
			files: map[string]string{"x.yaml": strings.Replace(denied, "validationActions: [Deny, Audit]", "validationActions: Deny", 1), "x.expect.yaml": expectHead + "deny: true\n"},
			want:  "DIR/x.yaml:23: document 2 (ValidatingAdmissionPolicyBinding/replicas-binding): spec.validationActions",
		},
		{
			name:  "no request",
			files: map[string]string{"x.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n", "x.expect.yaml": expectHead + "allow: true\n"},
			want:  "DIR/x.yaml: a case needs exactly one AdmissionReview with a request, found 0",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeDir(t, tc.files)
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
			want := strings.ReplaceAll(tc.want, "DIR/", dir+string(filepath.Separator))
			if c.Status != statusError || !strings.Contains(c.Error, want) {
				t.Errorf("case status %s, error %q; want error containing %q", c.Status, c.Error, want)
			}
			if strings.Contains(c.Error, "\n") {
				t.Errorf("error %q spans several lines", c.Error)
			}
		})
	}
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		paths    []string
		format   string
		version  string
		testMode bool
		usage    string // substring of a usage error
	}{
		{name: "one file", args: []string{"c.yaml"}, paths: []string{"c.yaml"}, format: "text", version: "1.37"},
		{name: "version keeps print mode", args: []string{"-kubernetes-version", "1.33", "c.yaml"}, paths: []string{"c.yaml"}, format: "text", version: "1.33"},
		{name: "flags after paths", args: []string{"dir", "-format", "junit", "-kubernetes-version=v1.30"}, paths: []string{"dir"}, format: "junit", version: "1.30", testMode: true},
		{name: "test flag", args: []string{"-test", "c.yaml"}, paths: []string{"c.yaml"}, format: "text", version: "1.37", testMode: true},
		{name: "run flag", args: []string{"-run", "deny", "c.yaml"}, paths: []string{"c.yaml"}, format: "text", version: "1.37", testMode: true},
		{name: "several paths", args: []string{"a", "b"}, paths: []string{"a", "b"}, format: "text", version: "1.37", testMode: true},
		{name: "double dash", args: []string{"-format", "json", "--", "-odd", "b"}, paths: []string{"-odd", "b"}, format: "json", version: "1.37", testMode: true},
		{name: "no paths", args: nil, usage: "no case file or directory given"},
		{name: "bad format", args: []string{"-format", "xml", "d"}, usage: `unknown -format "xml"`},
		{name: "bad version", args: []string{"-kubernetes-version", "1.29", "d"}, usage: "-kubernetes-version: unsupported Kubernetes version 1.29"},
		{name: "bad run", args: []string{"-run", "(", "d"}, usage: "-run: error parsing regexp"},
		{name: "unknown flag", args: []string{"-x", "d"}, usage: "flag provided but not defined: -x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, err := parseArgs(tc.args)
			if tc.usage != "" {
				if err == nil || !strings.Contains(err.Error(), tc.usage) || exitCode(err) != 2 {
					t.Fatalf("parseArgs(%q) error = %v (exit %d), want a usage error containing %q", tc.args, err, exitCode(err), tc.usage)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseArgs(%q) error = %v", tc.args, err)
			}
			got := []any{cfg.paths, cfg.format, cfg.version.String(), cfg.testMode}
			want := []any{tc.paths, tc.format, tc.version, tc.testMode}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("parseArgs(%q) mismatch (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

func TestRunHelp(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-h"}, &out); err != nil {
		t.Fatalf("run(-h) error = %v", err)
	}
	if !strings.Contains(out.String(), "-kubernetes-version") {
		t.Errorf("help lacks -kubernetes-version:\n%s", out.String())
	}
}

func TestRunNoCases(t *testing.T) {
	dir := writeDir(t, map[string]string{"notes.txt": "x"})
	for _, args := range [][]string{{dir}, {"-run", "nothing", filepath.Join("testdata", "cases")}} {
		if err := run(t.Context(), args, io.Discard); err == nil {
			t.Errorf("run(%q) = nil error, want an error", args)
		}
	}
}
