package versions

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/vapkit/vapkit/celenv"
)

// Modules maps each version with a module of its own to that module's
// directory, relative to the conformance module's root.
var Modules = map[celenv.Version]string{
	celenv.Version1_30: "v1_30",
	celenv.Version1_36: "v1_36",
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

// Run writes cases to a temporary directory and runs the program of the
// module of version v (root is the conformance module's directory) on it,
// returning one Outcome per case, by name. The module is built by `go run`
// with GOWORK=off; the first build of a version takes a minute or two.
func Run(ctx context.Context, root string, v celenv.Version, cases []Case) (map[string]Outcome, error) {
	mod, ok := Modules[v]
	if !ok {
		return nil, fmt.Errorf("no conformance module for Kubernetes %v", v)
	}
	dir, err := os.MkdirTemp("", "vapkit-versions-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for _, c := range cases {
		if err := os.WriteFile(filepath.Join(dir, c.Name+".yaml"), c.YAML, 0o644); err != nil {
			return nil, err
		}
	}
	cmd := exec.CommandContext(ctx, "go", "run", ".", dir)
	cmd.Dir = filepath.Join(root, mod)
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
			return nil, fmt.Errorf("reading the outcomes of %s: %w", mod, err)
		}
		out[o.Name] = o
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) != len(cases) {
		return nil, fmt.Errorf("%s answered %d cases of %d", mod, len(out), len(cases))
	}
	return out, nil
}
