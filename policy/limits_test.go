package policy_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vapkit/vapkit/policy"
)

func TestLoaderLimits(t *testing.T) {
	dir := t.TempDir()
	small := []byte(replicaPolicy)
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := write("a.yaml", small), write("b.yaml", small)
	n := int64(len(small))
	tests := []struct {
		name    string
		load    func() (*policy.Manifests, error)
		wantErr string // "" for success
	}{
		{"default limit", func() (*policy.Manifests, error) { return policy.Load(small, "a.yaml") }, ""},
		{"bytes over the limit", func() (*policy.Manifests, error) { return policy.Loader{MaxBytes: n - 1}.Load(small, "a.yaml") },
			"a.yaml: " + itoa(n) + " bytes exceed the limit of " + itoa(n-1) + " bytes (Loader.MaxBytes)"},
		{"reader over the limit", func() (*policy.Manifests, error) {
			return policy.Loader{MaxBytes: 10}.LoadReader(strings.NewReader(replicaPolicy), "")
		}, "<input>: larger than the limit of 10 bytes (Loader.MaxBytes)"},
		{"no limit", func() (*policy.Manifests, error) { return policy.Loader{MaxBytes: -1}.Load(small, "a.yaml") }, ""},
		{"each file within, total within", func() (*policy.Manifests, error) { return policy.Loader{MaxBytes: 2 * n}.LoadFiles(a, b) }, ""},
		{"file over the limit", func() (*policy.Manifests, error) { return policy.Loader{MaxBytes: n - 1}.LoadFiles(a) },
			a + ": " + itoa(n) + " bytes exceed the limit of " + itoa(n-1) + " bytes (Loader.MaxBytes)"},
		{"total over the limit", func() (*policy.Manifests, error) { return policy.Loader{MaxBytes: n + 1}.LoadFiles(a, b) },
			"files up to " + b + ": " + itoa(2*n) + " bytes exceed the limit of " + itoa(n+1) + " bytes (Loader.MaxBytes, for all files together)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.load()
			if tc.wantErr == "" {
				if err != nil || len(m.Policies) == 0 {
					t.Fatalf("load = %v, %v; want policies", m, err)
				}
				return
			}
			var le *policy.LimitError
			if !errors.As(err, &le) || err.Error() != tc.wantErr {
				t.Fatalf("load error = %v, want LimitError %q", err, tc.wantErr)
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestReadAdmissionReview(t *testing.T) {
	const ok = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","operation":"CREATE"}}`
	tests := []struct {
		name      string
		body      string
		max       int64
		wantErr   string
		wantLimit bool
	}{
		{name: "valid", body: ok},
		{name: "valid with trailing white space", body: ok + "\n \n"},
		{name: "trailing data", body: ok + `{}`, wantErr: "invalid AdmissionReview: unexpected data after the object at byte"},
		{name: "two reviews", body: ok + ok, wantErr: "unexpected data after the object"},
		{name: "not json", body: "{", wantErr: "invalid AdmissionReview: decoding"},
		{name: "v1beta1", body: `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"u"}}`, wantErr: "want admission.k8s.io/v1 AdmissionReview"},
		{name: "no request", body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, wantErr: "request is missing"},
		{name: "no uid", body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"operation":"CREATE"}}`, wantErr: "request.uid is required"},
		{name: "over the limit", body: ok, max: 20, wantErr: "AdmissionReview: larger than the limit of 20 bytes (the review size limit)", wantLimit: true},
		{name: "exactly the limit", body: ok, max: int64(len(ok))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := policy.ReadAdmissionReview(strings.NewReader(tc.body), tc.max)
			if tc.wantErr == "" {
				if err != nil || got.Request.UID != "u1" {
					t.Fatalf("ReadAdmissionReview() = %v, %v; want the review", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ReadAdmissionReview() error = %v, want containing %q", err, tc.wantErr)
			}
			var le *policy.LimitError
			if errors.As(err, &le) != tc.wantLimit {
				t.Errorf("errors.As(LimitError) = %t, want %t", !tc.wantLimit, tc.wantLimit)
			}
			if !tc.wantLimit && !errors.Is(err, policy.ErrReviewInvalid) {
				t.Errorf("error %v does not wrap ErrReviewInvalid", err)
			}
		})
	}
}
