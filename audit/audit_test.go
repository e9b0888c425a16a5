package audit_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/vapkit/vapkit/audit"
)

type add struct{ key, value string }

func TestCollector(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", audit.MaxValueLength)

	tests := []struct {
		name   string
		policy string
		adds   []add
		want   []audit.Annotation
	}{
		{
			name:   "nothing added",
			policy: "p",
			want:   nil,
		},
		{
			name:   "single value",
			policy: "deployment-audit",
			adds:   []add{{"user", "carol"}},
			want:   []audit.Annotation{{"deployment-audit/user", "carol"}},
		},
		{
			name:   "values are trimmed",
			policy: "deployment-audit",
			adds:   []add{{"replicas", "  4 replicas  "}, {"tabs", "\t\nx\r\n"}},
			want:   []audit.Annotation{{"deployment-audit/replicas", "4 replicas"}, {"deployment-audit/tabs", "x"}},
		},
		{
			name:   "empty and blank values are not recorded",
			policy: "deployment-audit",
			adds:   []add{{"blank", "   "}, {"empty", ""}, {"user", "carol"}, {"blank", "later"}},
			want:   []audit.Annotation{{"deployment-audit/user", "carol"}, {"deployment-audit/blank", "later"}},
		},
		{
			name:   "distinct values joined in insertion order",
			policy: "limit-audit",
			adds:   []add{{"limit-name", "limit-b"}, {"limit-name", "limit-a"}, {"limit-name", "limit-c"}},
			want:   []audit.Annotation{{"limit-audit/limit-name", "limit-b, limit-a, limit-c"}},
		},
		{
			name:   "identical values published once",
			policy: "limit-audit",
			adds: []add{
				{"limit-name", "limit-a"}, {"checked-kind", "Deployment"},
				{"limit-name", "limit-b"}, {"checked-kind", "Deployment"},
				{"limit-name", " limit-a "},
			},
			want: []audit.Annotation{{"limit-audit/limit-name", "limit-a, limit-b"}, {"limit-audit/checked-kind", "Deployment"}},
		},
		{
			name:   "de-duplication is per key",
			policy: "p",
			adds:   []add{{"a", "x"}, {"b", "x"}, {"a", "y"}},
			want:   []audit.Annotation{{"p/a", "x, y"}, {"p/b", "x"}},
		},
		{
			name:   "keys in order of first insertion",
			policy: "p",
			adds:   []add{{"zeta", "1"}, {"alpha", "2"}, {"zeta", "3"}},
			want:   []audit.Annotation{{"p/zeta", "1, 3"}, {"p/alpha", "2"}},
		},
		{
			name:   "value of exactly the limit is kept",
			policy: "p",
			adds:   []add{{"k", long}},
			want:   []audit.Annotation{{"p/k", long}},
		},
		{
			name:   "longer value is cut to the limit",
			policy: "p",
			adds:   []add{{"k", long + "bcd"}},
			want:   []audit.Annotation{{"p/k", long}},
		},
		{
			name:   "trimming happens before cutting",
			policy: "p",
			adds:   []add{{"k", "   " + long + "   "}},
			want:   []audit.Annotation{{"p/k", long}},
		},
		{
			name:   "white space exposed by the cut is kept",
			policy: "p",
			adds:   []add{{"k", long[1:] + " tail"}},
			want:   []audit.Annotation{{"p/k", long[1:] + " "}},
		},
		{
			name:   "cut may split a UTF-8 character",
			policy: "p",
			adds:   []add{{"k", long[1:] + "é"}},
			want:   []audit.Annotation{{"p/k", long[1:] + "\xc3"}},
		},
		{
			name:   "values equal after the cut are duplicates",
			policy: "p",
			adds:   []add{{"k", long + "x"}, {"k", long + "y"}},
			want:   []audit.Annotation{{"p/k", long}},
		},
		{
			name:   "joined value may exceed the limit",
			policy: "p",
			adds:   []add{{"k", long + "x"}, {"k", "b"}},
			want:   []audit.Annotation{{"p/k", long + ", b"}},
		},
		{
			name:   "key with a slash is dropped",
			policy: "p",
			adds:   []add{{"a/b", "x"}, {"ok", "y"}},
			want:   []audit.Annotation{{"p/ok", "y"}},
		},
		{
			name:   "empty key is dropped",
			policy: "p",
			adds:   []add{{"", "x"}},
			want:   nil,
		},
		{
			name:   "key name longer than 63 characters is dropped",
			policy: "p",
			adds:   []add{{strings.Repeat("k", 64), "x"}, {strings.Repeat("k", 63), "y"}},
			want:   []audit.Annotation{{"p/" + strings.Repeat("k", 63), "y"}},
		},
		{
			name:   "key names may use upper case, dots, dashes and underscores",
			policy: "my-policy.example.com",
			adds:   []add{{"Max_Replicas.v-1", "x"}, {"-bad", "y"}, {"bad.", "z"}},
			want:   []audit.Annotation{{"my-policy.example.com/Max_Replicas.v-1", "x"}},
		},
		{
			name:   "policy name that is not a DNS subdomain",
			policy: "Bad_Policy",
			adds:   []add{{"k", "x"}},
			want:   nil,
		},
		{
			name:   "empty policy name",
			policy: "",
			adds:   []add{{"k", "x"}},
			want:   nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := audit.NewCollector(tc.policy)
			for _, a := range tc.adds {
				c.Add(a.key, a.value)
			}
			got := c.Annotations()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Annotations() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCollectorZeroAndNil(t *testing.T) {
	t.Parallel()
	var zero audit.Collector
	zero.Add("k", "v")
	if got := zero.Annotations(); got != nil {
		t.Errorf("zero Collector Annotations() = %v, want nil", got)
	}
	var nilC *audit.Collector
	nilC.Add("k", "v")
	if got := nilC.Annotations(); got != nil {
		t.Errorf("nil Collector Annotations() = %v, want nil", got)
	}
}

func failure(msg string, idx int, actions ...admissionregistrationv1.ValidationAction) audit.ValidationFailure {
	return audit.ValidationFailure{Message: msg, Policy: "p", Binding: "b", ExpressionIndex: idx, ValidationActions: actions}
}

func TestEncodeValidationFailures(t *testing.T) {
	t.Parallel()
	const (
		deny     = admissionregistrationv1.Deny
		warn     = admissionregistrationv1.Warn
		auditAct = admissionregistrationv1.Audit
	)
	tests := []struct {
		name     string
		failures []audit.ValidationFailure
		want     string
		wantOK   bool
	}{
		{
			name:     "nil",
			failures: nil,
			want:     "",
			wantOK:   false,
		},
		{
			name:     "empty",
			failures: []audit.ValidationFailure{},
			want:     "",
			wantOK:   false,
		},
		{
			name:     "spec example",
			failures: []audit.ValidationFailure{failure("m1", 1, auditAct, deny)},
			want:     `[{"message":"m1","policy":"p","binding":"b","expressionIndex":1,"validationActions":["Audit","Deny"]}]`,
			wantOK:   true,
		},
		{
			name: "conformance actions-audit-only",
			failures: []audit.ValidationFailure{{
				Message: "fewer than 2 replicas", Policy: "replica-audit", Binding: "replica-audit-binding",
				ExpressionIndex: 1, ValidationActions: []admissionregistrationv1.ValidationAction{auditAct},
			}},
			want:   `[{"message":"fewer than 2 replicas","policy":"replica-audit","binding":"replica-audit-binding","expressionIndex":1,"validationActions":["Audit"]}]`,
			wantOK: true,
		},
		{
			name: "conformance params-by-selector-order-dependent",
			failures: []audit.ValidationFailure{
				{Message: "limit limit-one is 1", Policy: "replicalimit-policy.example.com", Binding: "replicalimit-binding.example.com",
					ValidationActions: []admissionregistrationv1.ValidationAction{deny, warn, auditAct}},
				{Message: "limit limit-two is 2", Policy: "replicalimit-policy.example.com", Binding: "replicalimit-binding.example.com",
					ValidationActions: []admissionregistrationv1.ValidationAction{deny, warn, auditAct}},
			},
			want: `[{"message":"limit limit-one is 1","policy":"replicalimit-policy.example.com","binding":"replicalimit-binding.example.com","expressionIndex":0,"validationActions":["Deny","Warn","Audit"]},` +
				`{"message":"limit limit-two is 2","policy":"replicalimit-policy.example.com","binding":"replicalimit-binding.example.com","expressionIndex":0,"validationActions":["Deny","Warn","Audit"]}]`,
			wantOK: true,
		},
		{
			name:     "HTML characters are escaped",
			failures: []audit.ValidationFailure{failure(`<a> & "b"`, 0, auditAct)},
			want:     `[{"message":"\u003ca\u003e \u0026 \"b\"","policy":"p","binding":"b","expressionIndex":0,"validationActions":["Audit"]}]`,
			wantOK:   true,
		},
		{
			name:     "control characters and line separators are escaped",
			failures: []audit.ValidationFailure{failure("a\nb\tc\u2028d\x01", 0, auditAct)},
			want:     `[{"message":"a\nb\tc\u2028d\u0001","policy":"p","binding":"b","expressionIndex":0,"validationActions":["Audit"]}]`,
			wantOK:   true,
		},
		{
			name:     "invalid UTF-8 becomes U+FFFD",
			failures: []audit.ValidationFailure{failure("x\xffy", 0, auditAct)},
			want:     `[{"message":"x\ufffdy","policy":"p","binding":"b","expressionIndex":0,"validationActions":["Audit"]}]`,
			wantOK:   true,
		},
		{
			name:     "nil actions encode as null",
			failures: []audit.ValidationFailure{failure("", 3)},
			want:     `[{"message":"","policy":"p","binding":"b","expressionIndex":3,"validationActions":null}]`,
			wantOK:   true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := audit.EncodeValidationFailures(tc.failures)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("EncodeValidationFailures() = %q, %v, want %q, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestEncodeValidationFailuresLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		count int
		want  int
	}{
		{"below limit", audit.MaxValidationFailures - 1, audit.MaxValidationFailures - 1},
		{"at limit", audit.MaxValidationFailures, audit.MaxValidationFailures},
		{"above limit", audit.MaxValidationFailures + 1, audit.MaxValidationFailures},
		{"far above limit", 1000, audit.MaxValidationFailures},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			failures := make([]audit.ValidationFailure, tc.count)
			for i := range failures {
				failures[i] = failure(fmt.Sprintf("m%d", i), i, admissionregistrationv1.Audit)
			}
			got, ok := audit.EncodeValidationFailures(failures)
			if !ok {
				t.Fatalf("EncodeValidationFailures() ok = false, want true")
			}
			var decoded []audit.ValidationFailure
			if err := json.Unmarshal([]byte(got), &decoded); err != nil {
				t.Fatalf("json.Unmarshal() error = %v", err)
			}
			if len(decoded) != tc.want {
				t.Fatalf("len(decoded) = %d, want %d", len(decoded), tc.want)
			}
			if diff := cmp.Diff(failures[:tc.want], decoded); diff != "" {
				t.Errorf("decoded mismatch, want the first entries (-want +got):\n%s", diff)
			}
			if len(failures) != tc.count {
				t.Errorf("input length changed to %d, want %d", len(failures), tc.count)
			}
		})
	}
}
