package versions

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestHarnessCompiles materializes the harness module of every version and
// runs go vet on it with that version's build tags, so that a change to
// package upstream that breaks an older version's files fails in CI, which
// runs only the 1.30 harness (TestVersion1_30). With the modules in the
// module cache it downloads nothing.
func TestHarnessCompiles(t *testing.T) {
	for _, v := range Versions {
		t.Run(v.String(), func(t *testing.T) {
			dir := t.TempDir()
			if err := Materialize(dir, v); err != nil {
				t.Fatal(err)
			}
			began := time.Now()
			cmd := exec.CommandContext(t.Context(), "go", "vet", "-tags", Tags(v), "./...")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOWORK=off")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("go vet -tags %s in the %v harness: %v\n%s", Tags(v), v, err, out)
			}
			t.Logf("go vet: %v", time.Since(began).Round(100*time.Millisecond))
		})
	}
}

func TestBuilds(t *testing.T) {
	harness := []string{"vapkit_harness", "vapkit_k8s_1_33"}
	tests := []struct {
		name string
		src  string
		tags []string
		want bool
	}{
		{name: "no constraint", src: "// Package p.\npackage p\n", tags: harness, want: true},
		{name: "harness only", src: "//go:build vapkit_harness\n\npackage p\n", tags: harness, want: true},
		{name: "harness only, at 1.37", src: "//go:build vapkit_harness\n\npackage p\n", tags: nil, want: false},
		{name: "1.37 only", src: "//go:build !vapkit_harness\n\npackage p\n", tags: harness, want: false},
		{name: "1.37 only, at 1.37", src: "//go:build !vapkit_harness\n\npackage p\n", tags: nil, want: true},
		{name: "other version", src: "//go:build vapkit_harness && vapkit_k8s_1_35\n\npackage p\n", tags: harness, want: false},
		{name: "one of versions", src: "//go:build !vapkit_harness || vapkit_k8s_1_33\n\npackage p\n", tags: harness, want: true},
		{name: "after a comment", src: "// Copyright.\n\n//go:build vapkit_costcheck\n\npackage p\n", tags: harness, want: false},
		{name: "after the package clause", src: "package p\n\n//go:build vapkit_costcheck\n", tags: harness, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := builds([]byte(tt.src), tt.tags)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("builds(%q, %v) = %v, want %v", tt.src, tt.tags, got, tt.want)
			}
		})
	}
}

func TestBuildsBadConstraint(t *testing.T) {
	if _, err := builds([]byte("//go:build (a\n\npackage p\n"), nil); err == nil {
		t.Error("builds accepted an unparsable constraint")
	}
}
