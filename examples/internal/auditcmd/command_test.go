package auditcmd

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testdata is the sample dump and policies of examples/audit.
var testdata = filepath.Join("..", "..", "audit", "testdata")

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestGolden runs the audit of the sample dump and compares the output with
// the golden files; go test -update rewrites them.
func TestGolden(t *testing.T) {
	base := []string{"-policies", filepath.Join(testdata, "policies"), "-objects", filepath.Join(testdata, "cluster")}
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{"summary", base, "summary.golden"},
		{"details", append(base[:len(base):len(base)], "-details"), "details.golden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(t.Context(), tc.args, &out, io.Discard); err != nil {
				t.Fatalf("run(%q) error = %v", tc.args, err)
			}
			path := filepath.Join(testdata, tc.golden)
			if *update {
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), out.String()); diff != "" {
				t.Errorf("run(%q) output mismatch (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	empty := t.TempDir()
	policies := filepath.Join(testdata, "policies")
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "bad.yaml"), []byte("apiVersion: v1\nkind: Pod\nmetadata: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no flags", nil, "both -policies and -objects are required"},
		{"extra argument", []string{"-policies", policies, "-objects", policies, "x"}, `unexpected arguments: ["x"]`},
		{"unknown flag", []string{"-nope"}, "flag provided but not defined: -nope"},
		{"empty policies", []string{"-policies", empty, "-objects", policies}, "no *.yaml, *.yml or *.json files"},
		{"missing objects", []string{"-policies", policies, "-objects", filepath.Join(empty, "nope")}, "no such file or directory"},
		{"bad manifest", []string{"-policies", policies, "-objects", bad}, "bad.yaml:3:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := run(t.Context(), tc.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run(%q) error = %v, want containing %q", tc.args, err, tc.want)
			}
		})
	}
}
