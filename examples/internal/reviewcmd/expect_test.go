package reviewcmd

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vapkit/vapkit/policy/casefile"
)

// denied is the response of a typical rejection.
var denied = casefile.Comparable{
	Allowed:  false,
	Code:     422,
	Reason:   "Invalid",
	Message:  `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'replicas' with binding 'b' denied request: at most 5 replicas`,
	Warnings: []string{"Validation failed for ValidatingAdmissionPolicy 'replicas' with binding 'b': at most 5 replicas"},
	AuditAnnotations: map[string]string{
		"replicas/count": "7",
	},
}

var admitted = casefile.Comparable{Allowed: true, Warnings: []string{"careful"}}

func TestExpectationFormat(t *testing.T) {
	const head = "apiVersion: vapkit.dev/v1alpha1\nkind: Expectation\n"
	tests := []struct {
		name string
		doc  string // appended to head
		got  casefile.Comparable
		// want are the failed checks as "line path"; wantErr is a substring
		// of the parse error.
		want    []string
		wantErr string
		skip    string
	}{
		{name: "allow", doc: "allow: true\n", got: admitted},
		{name: "allow but denied", doc: "allow: true\n", got: denied, want: []string{"3 allow"}},
		{name: "deny true", doc: "deny: true\n", got: denied},
		{name: "deny but allowed", doc: "deny: true\n", got: admitted, want: []string{"3 deny"}},
		{name: "exact message", doc: "deny:\n  message: " + `'` + strings.ReplaceAll(denied.Message, "'", "''") + `'` + "\n", got: denied},
		{name: "exact message differs", doc: "deny:\n  message: {exact: at most 5 replicas}\n", got: denied, want: []string{"4 deny.message"}},
		{name: "contains", doc: "deny:\n  message: {contains: at most 5}\n", got: denied},
		{name: "contains differs", doc: "deny:\n  message: {contains: at most 3}\n", got: denied, want: []string{"4 deny.message"}},
		{name: "regexp", doc: "deny:\n  message: {regexp: 'denied request: at most \\d+ replicas$'}\n", got: denied},
		{name: "regexp differs", doc: "deny:\n  message: {regexp: '^at most'}\n", got: denied, want: []string{"4 deny.message"}},
		{name: "code and reason", doc: "deny:\n  code: 422\n  reason: Invalid\n", got: denied},
		{name: "code and reason differ", doc: "deny:\n  code: 403\n  reason: Forbidden\n", got: denied, want: []string{"4 deny.code", "5 deny.reason"}},
		{name: "warnings", doc: "deny: true\nwarnings:\n- {contains: at most 5}\n", got: denied},
		{name: "no warnings expected", doc: "deny: true\nwarnings: []\n", got: denied, want: []string{"4 warnings[0]"}},
		{name: "missing warning", doc: "allow: true\nwarnings: [careful, again]\n", got: admitted, want: []string{"4 warnings[1]"}},
		{name: "warnings unchecked when absent", doc: "allow: true\n", got: admitted},
		{name: "audit annotation", doc: "deny: true\nauditAnnotations:\n  replicas/count: \"7\"\n", got: denied},
		{name: "audit annotation differs and missing", doc: "deny: true\nauditAnnotations:\n  replicas/count: {regexp: '^[0-5]$'}\n  other/key: x\n", got: denied,
			want: []string{"6 auditAnnotations[\"other/key\"]", "5 auditAnnotations[\"replicas/count\"]"}},
		{name: "skip", doc: "skip: later\n", got: denied, skip: "later"},
		{name: "skip with deny", doc: "skip: later\ndeny: true\n", got: denied, skip: "later"},
		{name: "anchors and aliases", doc: "deny:\n  message: &m {contains: replicas}\nwarnings: [*m]\n", got: denied},

		{name: "neither allow nor deny", doc: "warnings: []\n", wantErr: "x.yaml:1: document 1 (Expectation): an expectation needs allow, deny or skip"},
		{name: "both allow and deny", doc: "allow: true\ndeny: true\n", wantErr: "x.yaml:1: document 1 (Expectation): allow and deny are exclusive"},
		{name: "allow false", doc: "allow: false\n", wantErr: "x.yaml:3: document 1 (Expectation): allow: must be true"},
		{name: "deny false", doc: "deny: false\n", wantErr: "x.yaml:3: document 1 (Expectation): deny: must be true or a mapping"},
		{name: "empty deny", doc: "deny:\n", wantErr: "x.yaml:3: document 1 (Expectation): deny: expected true or false, got null"},
		{name: "matcher of the wrong type", doc: "deny:\n  message: [a]\n", wantErr: "x.yaml:4: document 1 (Expectation): deny.message: expected a string or a mapping with one of exact, contains, regexp; got a list"},
		{name: "allow not a bool", doc: "allow: yes please\n", wantErr: `x.yaml:3: document 1 (Expectation): allow: expected true or false, got str "yes please"`},
		{name: "unknown field", doc: "allow: true\nwarning: []\n", wantErr: "x.yaml:4: document 1 (Expectation): warning: unknown field"},
		{name: "unknown deny field", doc: "deny:\n  mesage: x\n", wantErr: "x.yaml:4: document 1 (Expectation): deny.mesage: unknown field"},
		{name: "bad code", doc: "deny:\n  code: forbidden\n", wantErr: `x.yaml:4: document 1 (Expectation): deny.code: expected an HTTP status code, got str "forbidden"`},
		{name: "code out of range", doc: "deny:\n  code: 42\n", wantErr: "x.yaml:4: document 1 (Expectation): deny.code: expected an HTTP status code"},
		{name: "bad regexp", doc: "deny:\n  message: {regexp: '('}\n", wantErr: "x.yaml:4: document 1 (Expectation): deny.message.regexp: error parsing regexp"},
		{name: "two matchers", doc: "deny:\n  message: {exact: a, contains: b}\n", wantErr: "x.yaml:4: document 1 (Expectation): deny.message: want exactly one of exact, contains, regexp"},
		{name: "unknown matcher", doc: "deny:\n  message: {prefix: a}\n", wantErr: "x.yaml:4: document 1 (Expectation): deny.message.prefix: unknown field"},
		{name: "non-string text", doc: "allow: true\nwarnings: [7]\n", wantErr: `x.yaml:4: document 1 (Expectation): warnings[0]: expected a string, got int "7"`},
		{name: "warnings not a list", doc: "allow: true\nwarnings: careful\n", wantErr: `x.yaml:4: document 1 (Expectation): warnings: expected a list, got str "careful"`},
		{name: "empty skip", doc: "skip: ' '\n", wantErr: "x.yaml:3: document 1 (Expectation): skip: give the reason"},
		{name: "annotations not a mapping", doc: "deny: true\nauditAnnotations: [a]\n", wantErr: "x.yaml:4: document 1 (Expectation): auditAnnotations: expected a mapping, got a list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := parseExpectationFile("x.yaml", []byte(head+tc.doc))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseExpectationFile() error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseExpectationFile() error = %v", err)
			}
			if e.skip != tc.skip {
				t.Errorf("skip = %q, want %q", e.skip, tc.skip)
			}
			var got []string
			for _, m := range e.check(tc.got, &mutated{}) {
				got = append(got, strconv.Itoa(m.line)+" "+m.path)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("check() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpectationFileErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{name: "two documents", data: "apiVersion: vapkit.dev/v1alpha1\nkind: Expectation\nallow: true\n---\napiVersion: vapkit.dev/v1alpha1\nkind: Expectation\nallow: true\n",
			want: "x.expect.yaml: an expectation file holds exactly one Expectation document, found 2 documents"},
		{name: "wrong kind", data: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", want: "x.expect.yaml:1: document 1 (Expectation): expected apiVersion vapkit.dev/v1alpha1 and kind Expectation, got v1 ConfigMap"},
		{name: "broken YAML", data: "apiVersion: vapkit.dev/v1alpha1\nkind: Expectation\nallow: [\n", want: "x.expect.yaml:"},
		{name: "duplicate field", data: "apiVersion: vapkit.dev/v1alpha1\nkind: Expectation\nallow: true\nallow: true\n", want: "x.expect.yaml:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseExpectationFile("x.expect.yaml", []byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("parseExpectationFile() error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestLineDiff(t *testing.T) {
	tests := []struct {
		name, want, got, diff string
	}{
		{name: "equal", want: "a\nb", got: "a\nb", diff: "  a\n  b"},
		{name: "changed line", want: "a\nb\nc", got: "a\nx\nc", diff: "  a\n- b\n+ x\n  c"},
		{name: "added line", want: "a", got: "a\nb", diff: "  a\n+ b"},
		{name: "removed line", want: "a\nb", got: "b", diff: "- a\n  b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := lineDiff(tc.want, tc.got); got != tc.diff {
				t.Errorf("lineDiff(%q, %q) = %q, want %q", tc.want, tc.got, got, tc.diff)
			}
		})
	}
}
