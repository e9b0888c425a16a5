//go:build vapkit_gen

// Command gen regenerates schemas.json.gz and schemas_extra.json, the OpenAPI
// definitions of every kind a kube-apiserver serves by default that package
// typecheck embeds.
//
// It runs in two steps, both from the module root so that the packages are
// the versions go.mod selects:
//
//  1. kube-openapi's openapi-gen (pinned to the kube-openapi version of
//     go.mod, fetched through the module proxy by `go run pkg@version`)
//     writes GetOpenAPIDefinitions for every k8s.io/api package and the
//     apimachinery packages Kubernetes generates definitions for, into a
//     temporary package guarded by the vapkit_gen build tag;
//  2. the extra program (./extra), run in a temporary module of its own
//     because it needs modules vapkit does not require, prints the
//     definitions of the two API groups a kube-apiserver serves from
//     outside k8s.io/api: apiextensions.k8s.io (from
//     k8s.io/apiextensions-apiserver) and apiregistration.k8s.io (from
//     k8s.io/kube-aggregator), both at the k8s.io/api version of go.mod;
//  3. the dump program (./dump) calls GetOpenAPIDefinitions, keeps what
//     type checking needs and writes k8s.io/api's definitions as
//     compressed JSON (schemas.json.gz) and the other two groups' as plain
//     JSON, one definition per line (schemas_extra.json, about 30 KB).
//
// kube-openapi/pkg/common, which the generated code imports, needs a go.sum
// entry (github.com/emicklei/go-restful) that vapkit does not carry, so the
// generated file is pointed at the small ./openapicommon stand-in. The
// temporary package is removed afterwards. Run it with
// `go generate ./typecheck` (the directive lives in typecheck/builtin.go).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// openapiGen is the generator, pinned to go.mod's kube-openapi version.
const openapiGen = "k8s.io/kube-openapi/cmd/openapi-gen@v0.0.0-20260721132016-d427ff9ee9ad"

// apimachineryPackages are the packages outside k8s.io/api whose types the
// API server's definitions include.
var apimachineryPackages = []string{
	"k8s.io/apimachinery/pkg/api/resource",
	"k8s.io/apimachinery/pkg/apis/meta/v1",
	"k8s.io/apimachinery/pkg/apis/meta/v1beta1",
	"k8s.io/apimachinery/pkg/runtime",
	"k8s.io/apimachinery/pkg/util/intstr",
	"k8s.io/apimachinery/pkg/version",
}

const tmpPkg = "typecheck/internal/gen/openapitmp"

func main() {
	out := flag.String("o", "schemas.json.gz", "output file for k8s.io/api, relative to the typecheck directory")
	extraOut := flag.String("extra-o", "schemas_extra.json", "output file for apiextensions.k8s.io and apiregistration.k8s.io")
	flag.Parse()
	if err := run(*out, *extraOut); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(out, extraOut string) error {
	outAbs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	extraOutAbs, err := filepath.Abs(extraOut)
	if err != nil {
		return err
	}
	root, err := goOutput(".", "list", "-m", "-f", "{{.Dir}}")
	if err != nil {
		return err
	}
	apiDir, err := goOutput(root, "list", "-m", "-f", "{{.Dir}}", "k8s.io/api")
	if err != nil {
		return err
	}
	pkgs, err := apiPackages(apiDir)
	if err != nil {
		return err
	}
	pkgs = append(pkgs, apimachineryPackages...)

	tmp := filepath.Join(root, tmpPkg)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	header := filepath.Join(tmp, "header.txt")
	if err := os.WriteFile(header, nil, 0o644); err != nil {
		return err
	}
	args := []string{"run", openapiGen,
		"--output-dir", tmp,
		"--output-pkg", "github.com/vapkit/vapkit/" + tmpPkg,
		"--output-file", "zz_generated.openapi.go",
		"--go-header-file", header,
		"--report-filename", os.DevNull,
	}
	args = append(args, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("openapi-gen: %w", err)
	}
	if err := rewrite(filepath.Join(tmp, "zz_generated.openapi.go")); err != nil {
		return err
	}
	extra, err := extraDefinitions(root, apiDir)
	if err != nil {
		return err
	}
	defer os.Remove(extra)
	cmd = exec.Command("go", "run", "-tags", "vapkit_gen", "./typecheck/internal/gen/dump", "-o", outAbs, "-extra", extra, "-extra-o", extraOutAbs)
	cmd.Dir = root
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	return nil
}

// extraDefinitions runs ./extra in a temporary module that requires
// k8s.io/apiextensions-apiserver and k8s.io/kube-aggregator at the version
// of k8s.io/api (apiDir ends in k8s.io/api@vX.Y.Z) and kube-openapi at
// go.mod's version, and returns the name of a temporary file holding its
// output.
func extraDefinitions(root, apiDir string) (string, error) {
	_, version, ok := strings.Cut(filepath.Base(apiDir), "@")
	if !ok {
		return "", fmt.Errorf("cannot tell the k8s.io/api version from %s", apiDir)
	}
	openapi := strings.TrimPrefix(openapiGen, "k8s.io/kube-openapi/cmd/openapi-gen@")
	dir, err := os.MkdirTemp("", "vapkit-gen-extra")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	src, err := os.ReadFile(filepath.Join(root, "typecheck", "internal", "gen", "extra", "main.go"))
	if err != nil {
		return "", err
	}
	// Without its constraint, so that `go mod tidy` there follows its imports.
	src = bytes.Replace(src, []byte("//go:build ignore\n"), nil, 1)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644); err != nil {
		return "", err
	}
	gomod := "module vapkitgenextra\n\ngo 1.26.0\n\nrequire (\n" +
		"\tk8s.io/apiextensions-apiserver " + version + "\n" +
		"\tk8s.io/kube-aggregator " + version + "\n" +
		"\tk8s.io/kube-openapi " + openapi + "\n)\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		return "", err
	}
	if _, err := goOutput(dir, "mod", "tidy"); err != nil {
		return "", err
	}
	out, err := goOutput(dir, "run", "main.go")
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "vapkit-gen-extra-*.json")
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(out); err != nil {
		f.Close()
		return "", err
	}
	return f.Name(), f.Close()
}

// apiPackages lists the k8s.io/api packages whose doc.go asks for OpenAPI
// definitions.
func apiPackages(apiDir string) ([]string, error) {
	var pkgs []string
	err := filepath.WalkDir(apiDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != "doc.go" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Contains(data, []byte("+k8s:openapi-gen=true")) {
			return nil
		}
		rel, err := filepath.Rel(apiDir, filepath.Dir(path))
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		pkgs = append(pkgs, "k8s.io/api/"+filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(pkgs)
	return pkgs, err
}

// rewrite puts the generated file behind the vapkit_gen build tag and
// points its kube-openapi/pkg/common import at the openapicommon shim (the
// real package needs a go.sum entry vapkit does not carry).
func rewrite(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	src := string(data)
	src = strings.Replace(src, "//go:build !ignore_autogenerated\n", "//go:build vapkit_gen\n", 1)
	src = strings.Replace(src, "// +build !ignore_autogenerated\n", "", 1)
	const from = `"k8s.io/kube-openapi/pkg/common"`
	if !strings.Contains(src, from) || !strings.HasPrefix(src, "//go:build vapkit_gen\n") {
		return fmt.Errorf("%s: unexpected openapi-gen output", path)
	}
	src = strings.Replace(src, from, `"github.com/vapkit/vapkit/typecheck/internal/gen/openapicommon"`, 1)
	return os.WriteFile(path, []byte(src), 0o644)
}

func goOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(b)), nil
}
