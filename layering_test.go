package vapkit_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/vapkit/vapkit"

// Tiers of the packages of the module, lowest first. A package may import
// ours only from a lower tier; internal building blocks may also import
// each other. Every package `go list ./...` reports must be listed, and
// every listed package must exist: adding a package means choosing its
// tier here.
const (
	tierInternal    = iota // building blocks: import no public package
	tierLeaf               // public packages that import no public package
	tierCEL                // the CEL environment
	tierCELInternal        // internal adapters over the CEL environment
	tierLibrary            // the evaluator and the type checker
	tierHarness            // harnesses above the API
	tierCommand            // commands shared by the examples
	tierExample            // example programs
)

var tierNames = []string{"internal", "leaf", "CEL", "CEL internal", "library", "harness", "command", "example"}

var tiers = map[string]int{
	"internal/apivalidation":        tierInternal,
	"internal/builtin":              tierInternal,
	"internal/builtin/internal/gen": tierInternal,
	"internal/builtin/defaulting":   tierInternal,
	"internal/builtin/objectmeta":   tierInternal,
	"internal/celbridge":            tierInternal,
	"internal/celvalue":             tierInternal,
	"internal/costcheck":            tierInternal,
	"internal/mutation":             tierInternal,
	"internal/patchtypes":           tierInternal,
	"celenv/internal/library":       tierInternal,

	"":                tierLeaf, // the module's doc package
	"audit":           tierLeaf,
	"params":          tierLeaf,
	"matching":        tierLeaf,
	"celenv/authz":    tierLeaf,
	"celenv/escaping": tierLeaf,
	"celenv/listtype": tierLeaf,
	"policy/manifest": tierLeaf,

	"celenv": tierCEL,

	"internal/exprcheck": tierCELInternal,

	"policy":    tierLibrary,
	"typecheck": tierLibrary,

	"policy/casefile": tierHarness,

	"examples/internal/auditcmd":     tierCommand,
	"examples/internal/reviewcmd":    tierCommand,
	"examples/internal/typecheckcmd": tierCommand,

	"examples/audit":           tierExample,
	"examples/params-informer": tierExample,
	"examples/quickstart":      tierExample,
	"examples/review":          tierExample,
	"examples/typecheck":       tierExample,
	"examples/vapkit":          tierExample,
}

// forbiddenModules may never reach the library, directly or indirectly.
var forbiddenModules = []string{
	"k8s.io/apiserver", "k8s.io/client-go", "k8s.io/component-base",
	"github.com/prometheus/", "go.opentelemetry.io/", "google.golang.org/grpc",
}

// offlineOnly may serve typecheck but never the evaluation path.
var offlineOnly = []string{"k8s.io/kube-openapi/pkg/validation/spec", "k8s.io/kube-openapi/pkg/validation/validate"}

// evaluationPath are the packages a program that only evaluates links.
var evaluationPath = []string{"policy", "celenv", "policy/manifest"}

type listedPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// goList runs go list in dir and decodes one entry per package.
func goList(t *testing.T, dir string, args ...string) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Imports,Deps"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list in %s: %v", dir, err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// ours returns the path of p relative to the module, and whether p is in
// the root module's package tree.
func ours(p string) (string, bool) {
	if p == module {
		return "", true
	}
	return strings.CutPrefix(p, module+"/")
}

func tierName(tier int) string { return tierNames[tier] }

// TestLayering checks that every import between the module's packages runs
// downward through the tiers, that examples use only what users can import,
// and that the library stays free of the API server's dependencies.
func TestLayering(t *testing.T) {
	pkgs := goList(t, ".", "./...")
	seen := map[string]bool{}
	for _, p := range pkgs {
		rel, _ := ours(p.ImportPath)
		seen[rel] = true
		tier, known := tiers[rel]
		if !known {
			t.Errorf("package %q has no tier: add it to tiers in layering_test.go", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			to, isOurs := ours(imp)
			if !isOurs {
				continue
			}
			toTier, known := tiers[to]
			switch {
			case !known:
				t.Errorf("%s imports %s, which has no tier", rel, to)
			case toTier > tier || (toTier == tier && tier != tierInternal):
				t.Errorf("%s (%s) imports %s (%s): imports must run to a lower tier", rel, tierName(tier), to, tierName(toTier))
			}
			if tier >= tierCommand && isVapkitInternal(to) {
				t.Errorf("%s imports %s: examples use only public packages, so that users can copy them", rel, to)
			}
		}
		if tier <= tierLibrary {
			checkDeps(t, rel, p.Deps)
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(tiers)) {
		if !seen[rel] {
			t.Errorf("tiers lists %q, which go list ./... does not report: remove the stale entry", rel)
		}
	}
}

// isVapkitInternal reports whether rel is an internal package of the
// library (not one of the examples' own).
func isVapkitInternal(rel string) bool {
	return !strings.HasPrefix(rel, "examples/") &&
		(strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/"))
}

// checkDeps checks the transitive dependencies of a library package.
func checkDeps(t *testing.T, rel string, deps []string) {
	t.Helper()
	onEvaluationPath := slices.Contains(evaluationPath, rel)
	for _, d := range deps {
		for _, f := range forbiddenModules {
			if strings.HasPrefix(d, f) {
				t.Errorf("%s depends on forbidden %s", rel, d)
			}
		}
		if onEvaluationPath {
			for _, f := range offlineOnly {
				if strings.HasPrefix(d, f) {
					t.Errorf("%s depends on %s, which belongs off the evaluation path", rel, d)
				}
			}
		}
	}
}

// TestLayeringNestedModules checks what the nested modules (conformance/
// and its per-version modules, examples/*/) import of the root module:
// only packages with a tier, and for examples only public ones.
func TestLayeringNestedModules(t *testing.T) {
	var mods []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" && path != "go.mod" {
			mods = append(mods, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"conformance", filepath.Join("examples", "controller")} {
		if !slices.Contains(mods, want) {
			t.Errorf("nested module %s not found (found %v)", want, mods)
		}
	}
	for _, dir := range mods {
		modPath := module + "/" + filepath.ToSlash(dir)
		for _, p := range goList(t, dir, "./...") {
			for _, imp := range p.Imports {
				to, isOurs := ours(imp)
				if !isOurs || imp == modPath || strings.HasPrefix(imp, modPath+"/") {
					continue
				}
				if _, known := tiers[to]; !known {
					t.Errorf("%s imports %s, which has no tier", p.ImportPath, to)
				}
				if strings.HasPrefix(dir, "examples") && (isVapkitInternal(to) || strings.HasPrefix(to, "examples/internal/")) {
					t.Errorf("%s imports %s: examples use only public packages, so that users can copy them", p.ImportPath, to)
				}
			}
		}
	}
}
