//go:build vapkit_gen

// Command gen regenerates smd.yaml.gz.b64 (gzip-compressed YAML in base64),
// the structured-merge-diff schema of every k8s.io/api type that package
// mutation embeds for apply configurations.
//
// It runs in two steps, both from the module root so that the packages are
// the versions go.mod selects:
//
//  1. internal/openapigen writes GetOpenAPIDefinitions for every k8s.io/api
//     package into a temporary package guarded by the vapkit_gen build tag;
//  2. the dump program (./dump) calls GetOpenAPIDefinitions, converts them
//     with kube-openapi's schemaconv (as the API server's type converters
//     do) and writes the compressed YAML.
//
// The temporary package is removed afterwards. Run it with
// `go generate ./internal/mutation` (the directive lives in
// internal/mutation/doc.go).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/vapkit/vapkit/internal/openapigen"
)

const tmpPkg = "internal/mutation/internal/gen/openapitmp"

func main() {
	out := flag.String("o", "smd.yaml.gz.b64", "output file, relative to the package directory")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	outAbs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	g, err := openapigen.Generate(tmpPkg)
	if err != nil {
		return err
	}
	defer g.Remove()
	cmd := exec.Command("go", "run", "-tags", "vapkit_gen", "./internal/mutation/internal/gen/dump", "-o", outAbs)
	cmd.Dir = g.Root
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	return nil
}
