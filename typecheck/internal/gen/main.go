//go:build vapkit_gen

// Command gen regenerates schemas.json.gz and schemas_extra.json, the OpenAPI
// definitions of every kind a kube-apiserver serves by default that package
// typecheck embeds.
//
// It runs in three steps, from the module root so that the packages are
// the versions go.mod selects:
//
//  1. internal/openapigen writes GetOpenAPIDefinitions for every k8s.io/api
//     package into a temporary package guarded by the vapkit_gen build tag;
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
// The temporary package is removed afterwards. Run it with
// `go generate ./typecheck` (the directive lives in typecheck/builtin.go).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/vapkit/vapkit/internal/openapigen"
)

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
	g, err := openapigen.Generate(tmpPkg)
	if err != nil {
		return err
	}
	defer g.Remove()
	extra, err := extraDefinitions(g.Root, g.APIDir)
	if err != nil {
		return err
	}
	defer os.Remove(extra)
	cmd := exec.Command("go", "run", "-tags", "vapkit_gen", "./typecheck/internal/gen/dump", "-o", outAbs, "-extra", extra, "-extra-o", extraOutAbs)
	cmd.Dir = g.Root
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
	openapi := strings.TrimPrefix(openapigen.OpenAPIGen, "k8s.io/kube-openapi/cmd/openapi-gen@")
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
	if _, err := openapigen.GoOutput(dir, "mod", "tidy"); err != nil {
		return "", err
	}
	out, err := openapigen.GoOutput(dir, "run", "main.go")
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
