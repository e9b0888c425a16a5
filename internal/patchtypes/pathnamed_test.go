package patchtypes

import (
	"strings"
	"testing"
)

// TestPathNamed checks pathNamed against strings.Join on names and paths
// with empty elements and elements holding dots.
func TestPathNamed(t *testing.T) {
	paths := [][]string{{"Object"}, {"Object", "spec"}, {"Object", "a.b"}, {"Object", "a", "b"}, {"Object", ""}, {""}, {"Object", "", "x"}}
	names := []string{"Object", "Object.spec", "Object.a.b", "Object.", "", "Object..x", "Object.specx", "Object.spe", "Objectspec"}
	for _, p := range paths {
		for _, n := range names {
			if got, want := pathNamed(n, p), n == strings.Join(p, "."); got != want {
				t.Errorf("pathNamed(%q, %q) = %v, want %v", n, p, got, want)
			}
		}
	}
}
