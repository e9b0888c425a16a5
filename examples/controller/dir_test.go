package controller

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vapkit/vapkit/policy/manifest"
)

// dirState writes files and gives each write its own modification time,
// so that two writes within the file system's timestamp granularity still
// differ.
type dirState struct {
	t    *testing.T
	dir  string
	tick time.Time
}

func (d *dirState) write(name, content string) {
	d.t.Helper()
	path := filepath.Join(d.dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		d.t.Fatal(err)
	}
	d.tick = d.tick.Add(time.Second)
	if err := os.Chtimes(path, d.tick, d.tick); err != nil {
		d.t.Fatal(err)
	}
}

// decide reports whether the source's evaluator allows a Deployment with
// replicas, and its generation.
func decide(t *testing.T, s Source, replicas int) (bool, int64) {
	t.Helper()
	ev, gen := s.Current()
	h := NewHandler(fixed{ev}, HandlerOptions{})
	return h.Review(t.Context(), deploymentRequest("u", replicas)).Allowed, gen
}

func poll(t *testing.T, s *DirSource, wantReloaded bool, wantErr string) {
	t.Helper()
	reloaded, err := s.Poll()
	if reloaded != wantReloaded || (err == nil) != (wantErr == "") || (err != nil && !strings.Contains(err.Error(), wantErr)) {
		t.Fatalf("Poll() = %t, %v; want %t, error containing %q", reloaded, err, wantReloaded, wantErr)
	}
}

// TestDirSourceHalfWritten checks the reload rules: a file set is loaded
// only when two consecutive scans agree, a reload that loses an object
// whose file still exists is refused, and the previous evaluator serves
// meanwhile.
func TestDirSourceHalfWritten(t *testing.T) {
	d := &dirState{t: t, dir: t.TempDir(), tick: time.Now().Add(-time.Hour)}
	full := strings.ReplaceAll(replicaPolicy, "LIMIT", "3")
	d.write("policy.yaml", full)
	s, err := NewDirSource(d.dir, DirOptions{AssumeNamespaces: true})
	if err != nil {
		t.Fatalf("NewDirSource() error = %v", err)
	}
	if ok, gen := decide(t, s, 5); ok || gen != 1 {
		t.Fatalf("generation %d allows 5 replicas = %t, want generation 1 denying", gen, ok)
	}

	// A writer that is not atomic: the file is caught with only its first
	// document, the policy, written. That loses the binding.
	half := full[:strings.Index(full, "---")]
	d.write("policy.yaml", half)
	poll(t, s, false, "") // changed since the last scan: wait for a second one
	poll(t, s, false, `reload refused: ValidatingAdmissionPolicyBinding "max-replicas" is gone from `+filepath.Join(d.dir, "policy.yaml")+", which still exists")
	poll(t, s, false, "") // the refused set is not retried
	if ok, gen := decide(t, s, 5); ok || gen != 1 {
		t.Fatalf("after the half-written file: generation %d allows 5 = %t, want generation 1 still denying", gen, ok)
	}
	if h := s.Health(); h.Err == nil || h.Generation != 1 {
		t.Errorf("Health() = %+v, want generation 1 with the refusal", h)
	}

	// The write completes, with a new limit.
	d.write("policy.yaml", strings.ReplaceAll(replicaPolicy, "LIMIT", "7"))
	poll(t, s, false, "")
	poll(t, s, true, "")
	if ok, gen := decide(t, s, 5); !ok || gen != 2 {
		t.Fatalf("after the complete write: generation %d allows 5 = %t, want generation 2 allowing", gen, ok)
	}
	if h := s.Health(); h.Err != nil {
		t.Errorf("Health().Err = %v, want nil after a good reload", h.Err)
	}

	// A new file caught growing is loaded once it stops changing.
	d.write("other.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n")
	poll(t, s, false, "")
	d.write("other.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\ndata: {x: y}\n")
	poll(t, s, false, "")
	poll(t, s, true, "")

	// Removing the file that held the policy deletes it.
	if err := os.Remove(filepath.Join(d.dir, "policy.yaml")); err != nil {
		t.Fatal(err)
	}
	poll(t, s, false, "")
	poll(t, s, true, "")
	if ok, gen := decide(t, s, 500); !ok || gen != 4 {
		t.Fatalf("after removing the policy's file: generation %d allows 500 = %t, want generation 4 allowing", gen, ok)
	}
}

// TestDirSourceErrors checks startup failures and a broken file.
func TestDirSourceErrors(t *testing.T) {
	if _, err := NewDirSource(t.TempDir(), DirOptions{}); err == nil || !strings.Contains(err.Error(), "no *.yaml, *.yml or *.json files") {
		t.Errorf("NewDirSource(empty) error = %v", err)
	}
	d := &dirState{t: t, dir: t.TempDir(), tick: time.Now().Add(-time.Hour)}
	d.write("policy.yaml", strings.ReplaceAll(replicaPolicy, "LIMIT", "3"))
	if _, err := NewDirSource(d.dir, DirOptions{Loader: manifest.Loader{MaxBytes: 10}}); err == nil || !strings.Contains(err.Error(), "exceed the limit of 10 bytes (Loader.MaxBytes)") {
		t.Errorf("NewDirSource(limit 10) error = %v, want the limit named", err)
	}
	s, err := NewDirSource(d.dir, DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.write("broken.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: [\n")
	poll(t, s, false, "")
	poll(t, s, false, "broken.yaml")
	if _, gen := s.Current(); gen != 1 {
		t.Errorf("generation = %d after a broken file, want 1", gen)
	}
}
