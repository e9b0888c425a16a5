package vapkit_test

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// allowedImports lists, for each library package, the vapkit packages it may
// import: dependencies run one way, and the leaves import none of ours.
var allowedImports = map[string][]string{
	"audit":    nil,
	"params":   nil,
	"matching": nil,
	"celenv": {"celenv/internal/library", "internal/celvalue", "internal/costcheck", "internal/patchtypes",
		"celenv/authz", "celenv/escaping", "internal/celbridge"},
	"celenv/listtype": nil,
	"celenv/authz":    nil,
	"celenv/escaping": nil,
	"policy": {"audit", "params", "matching", "celenv", "celenv/internal/library",
		"internal/builtin", "policy/manifest", "internal/costcheck", "internal/patchtypes", "internal/mutation", "internal/apivalidation",
		"internal/celvalue",
		"celenv/authz", "celenv/escaping", "internal/celbridge"},
	"typecheck": {"celenv", "celenv/internal/library", "internal/builtin", "policy/manifest", "internal/costcheck", "internal/patchtypes", "internal/mutation", "internal/apivalidation",
		"internal/celvalue",
		"celenv/authz", "celenv/escaping", "internal/celbridge"},
	"internal/apivalidation": nil,
	"policy/manifest":        {"internal/builtin"},
}

// forbiddenModules may never reach the library, directly or indirectly.
var forbiddenModules = []string{
	"k8s.io/apiserver", "k8s.io/client-go", "k8s.io/component-base",
	"github.com/prometheus/", "go.opentelemetry.io/", "google.golang.org/grpc",
}

// offlineOnly may serve typecheck but never the evaluation path.
var offlineOnly = []string{"k8s.io/kube-openapi/pkg/validation/spec", "k8s.io/kube-openapi/pkg/validation/validate"}

func TestLayering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/vapkit/vapkit/"
	for pkg, allowed := range allowedImports {
		t.Run(pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", "-json=ImportPath", "./"+pkg).Output()
			if err != nil {
				var ee *exec.ExitError
				if errors.As(err, &ee) && strings.Contains(string(ee.Stderr), "no Go files") {
					t.Skipf("%s has no Go files yet", pkg)
				}
				t.Fatalf("go list %s: %v", pkg, err)
			}
			ok := map[string]bool{pkg: true}
			for _, a := range allowed {
				ok[a] = true
			}
			dec := json.NewDecoder(strings.NewReader(string(out)))
			for dec.More() {
				var p struct{ ImportPath string }
				if err := dec.Decode(&p); err != nil {
					t.Fatal(err)
				}
				for _, f := range forbiddenModules {
					if strings.HasPrefix(p.ImportPath, f) {
						t.Errorf("%s depends on forbidden %s", pkg, p.ImportPath)
					}
				}
				if pkg == "policy" || pkg == "celenv" {
					for _, f := range offlineOnly {
						if strings.HasPrefix(p.ImportPath, f) {
							t.Errorf("%s depends on %s, which belongs off the evaluation path", pkg, p.ImportPath)
						}
					}
				}
				if rel, ours := strings.CutPrefix(p.ImportPath, mod); ours && !ok[rel] {
					t.Errorf("%s imports %s, which the layering does not allow", pkg, rel)
				}
			}
		})
	}
}
