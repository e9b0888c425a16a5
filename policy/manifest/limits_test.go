package manifest_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vapkit/vapkit/policy/manifest"
)

const limitPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  validations:
  - expression: "object.spec.replicas <= 5"
`

func TestLoaderLimits(t *testing.T) {
	dir := t.TempDir()
	small := []byte(limitPolicy)
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
		load    func() (*manifest.Set, error)
		wantErr string // "" for success
	}{
		{"default limit", func() (*manifest.Set, error) { return manifest.Load(small, "a.yaml") }, ""},
		{"bytes over the limit", func() (*manifest.Set, error) { return manifest.Loader{MaxBytes: n - 1}.Load(small, "a.yaml") },
			"a.yaml: " + itoa(n) + " bytes exceed the limit of " + itoa(n-1) + " bytes (Loader.MaxBytes)"},
		{"reader over the limit", func() (*manifest.Set, error) {
			return manifest.Loader{MaxBytes: 10}.LoadReader(strings.NewReader(limitPolicy), "")
		}, "<input>: larger than the limit of 10 bytes (Loader.MaxBytes)"},
		{"no limit", func() (*manifest.Set, error) { return manifest.Loader{MaxBytes: -1}.Load(small, "a.yaml") }, ""},
		{"each file within, total within", func() (*manifest.Set, error) { return manifest.Loader{MaxBytes: 2 * n}.LoadFiles(a, b) }, ""},
		{"file over the limit", func() (*manifest.Set, error) { return manifest.Loader{MaxBytes: n - 1}.LoadFiles(a) },
			a + ": " + itoa(n) + " bytes exceed the limit of " + itoa(n-1) + " bytes (Loader.MaxBytes)"},
		{"total over the limit", func() (*manifest.Set, error) { return manifest.Loader{MaxBytes: n + 1}.LoadFiles(a, b) },
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
			var le *manifest.LimitError
			if !errors.As(err, &le) || err.Error() != tc.wantErr {
				t.Fatalf("load error = %v, want LimitError %q", err, tc.wantErr)
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
