package casefile_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/policy/casefile"
)

// TestReviewWithVersion evaluates a case that uses the semver library,
// whose optional normalize argument arrived in Kubernetes 1.33, with
// environments of several versions.
func TestReviewWithVersion(t *testing.T) {
	c, err := casefile.ParseFile(filepath.Join("..", "..", "policy", "testdata", "cases", "lib-semver.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	def, err := c.Review(t.Context())
	if err != nil {
		t.Fatalf("Review() error = %v", err)
	}
	tests := []struct {
		version     celenv.Version
		sameAsNoEnv bool
	}{
		{celenv.Version1_37, true},
		{celenv.Version1_33, true},
		{celenv.Version1_32, false},
	}
	for _, tc := range tests {
		t.Run(tc.version.String(), func(t *testing.T) {
			env, err := celenv.New(celenv.Options{Version: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.ReviewWith(t.Context(), casefile.Options{Env: env})
			if err != nil {
				t.Fatalf("ReviewWith() error = %v", err)
			}
			if same := cmp.Equal(casefile.Project(def), casefile.Project(got)); same != tc.sameAsNoEnv {
				t.Errorf("ReviewWith(%s) same as Review() = %v, want %v; got %v", tc.version, same, tc.sameAsNoEnv, casefile.Project(got))
			}
		})
	}
	// The zero Options are the defaults.
	got, err := c.ReviewWith(t.Context(), casefile.Options{})
	if err != nil {
		t.Fatalf("ReviewWith(Options{}) error = %v", err)
	}
	if diff := cmp.Diff(casefile.Project(def), casefile.Project(got)); diff != "" {
		t.Errorf("ReviewWith(Options{}) mismatch (-Review +ReviewWith):\n%s", diff)
	}
}
