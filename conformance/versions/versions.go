package versions

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"go/build/constraint"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/conformance/upstream"
)

// harness holds the harness's package main (behind the vapkit_harness
// build tag, so that this module never builds it) and, in mod, the go.mod
// and go.sum of each version (mod/1.NN.mod, mod/1.NN.sum). Its package
// upstream is this module's own (upstream.Source), built with that
// version's tags; each version's module has this module's path, so that
// package main imports package upstream by the path it has here.
//
//go:embed harness
var harness embed.FS

// Versions lists the versions the harness runs, oldest first.
var Versions = []celenv.Version{
	celenv.Version1_30, celenv.Version1_31, celenv.Version1_32, celenv.Version1_33,
	celenv.Version1_34, celenv.Version1_35, celenv.Version1_36,
}

// Tags returns the build tags that select the harness files of version v.
func Tags(v celenv.Version) string {
	return fmt.Sprintf("vapkit_harness,vapkit_k8s_1_%d", int(v))
}

// Materialize writes the harness module of version v into dir (which must
// exist): that version's go.mod and go.sum, package main, and in upstream/
// the files of package upstream that version builds (those whose build
// constraint Tags(v) satisfies; test files are left out). Build or run it
// with GOWORK=off and -tags Tags(v).
func Materialize(dir string, v celenv.Version) error {
	if !slices.Contains(Versions, v) {
		return fmt.Errorf("no conformance harness for Kubernetes %v", v)
	}
	files := map[string][]byte{}
	for _, name := range []string{"mod", "sum"} {
		data, err := harness.ReadFile(fmt.Sprintf("harness/mod/%v.%s", v, name))
		if err != nil {
			return err
		}
		files["go."+name] = data
	}
	main, err := harness.ReadFile("harness/main.go")
	if err != nil {
		return err
	}
	files["main.go"] = main
	entries, err := fs.ReadDir(upstream.Source, ".")
	if err != nil {
		return err
	}
	tags := strings.Split(Tags(v), ",")
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		data, err := fs.ReadFile(upstream.Source, e.Name())
		if err != nil {
			return err
		}
		ok, err := builds(data, tags)
		if err != nil {
			return fmt.Errorf("upstream/%s: %w", e.Name(), err)
		}
		if ok {
			files[filepath.Join("upstream", e.Name())] = data
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "upstream"), 0o755); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// builds reports whether a Go file whose source is src is built with
// exactly the build tags tags (its //go:build line, if any, is satisfied).
func builds(src []byte, tags []string) (bool, error) {
	for line := range strings.Lines(string(src)) {
		if strings.HasPrefix(line, "package ") {
			break // constraints come before the package clause
		}
		if !constraint.IsGoBuild(line) {
			continue
		}
		expr, err := constraint.Parse(line)
		if err != nil {
			return false, err
		}
		return expr.Eval(func(tag string) bool { return slices.Contains(tags, tag) }), nil
	}
	return true, nil
}

// Case is one case file to run: its name (without .yaml) and content.
type Case struct {
	Name string
	YAML []byte
}

// Outcome is what the old version's plugin answered for one case: every
// response it can give, or why the case could not be run.
type Outcome struct {
	Name     string                           `json:"name"`
	Outcomes []*admissionv1.AdmissionResponse `json:"outcomes,omitempty"`
	Error    string                           `json:"error,omitempty"`
}

// Run writes cases to a temporary directory and runs the harness of
// version v on them (materialized into another temporary directory, built
// by `go run` with GOWORK=off; the first build of a version takes a minute
// or two), returning one Outcome per case, by name.
func Run(ctx context.Context, v celenv.Version, cases []Case) (map[string]Outcome, error) {
	dir, err := os.MkdirTemp("", "vapkit-versions-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	mod, casesDir := filepath.Join(dir, "harness"), filepath.Join(dir, "cases")
	for _, d := range []string{mod, casesDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := Materialize(mod, v); err != nil {
		return nil, err
	}
	for _, c := range cases {
		if err := os.WriteFile(filepath.Join(casesDir, c.Name+".yaml"), c.YAML, 0o644); err != nil {
			return nil, err
		}
	}
	cmd := exec.CommandContext(ctx, "go", "run", "-tags", Tags(v), ".", casesDir)
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go run in %s: %w\n%s", cmd.Dir, err, stderr.String())
	}
	out := map[string]Outcome{}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var o Outcome
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			return nil, fmt.Errorf("reading the outcomes of the %v harness: %w", v, err)
		}
		out[o.Name] = o
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) != len(cases) {
		return nil, fmt.Errorf("the %v harness answered %d cases of %d", v, len(out), len(cases))
	}
	return out, nil
}
