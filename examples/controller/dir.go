package controller

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

// DirOptions configure [NewDirSource]; the zero value is valid.
type DirOptions struct {
	// Options are passed to policy.Compile; Params, Namespaces and CRDs
	// are filled from the directory when nil.
	Options policy.Options
	// Loader limits the size of the files (manifest.DefaultMaxLoadBytes).
	Loader manifest.Loader
	// AssumeNamespaces makes a Namespace the directory does not hold exist,
	// with only the kubernetes.io/metadata.name label the API server sets
	// on every Namespace; without it such a request is denied with the API
	// server's 404, as if the Namespace did not exist.
	AssumeNamespaces bool
	// DryRun compiles every binding's Deny action as Warn.
	DryRun bool
	// Logger receives one line per reload; nil discards them.
	Logger *slog.Logger
	// Metrics records the generation and failed reloads.
	Metrics *Metrics
}

// DirSource serves the evaluator compiled from a directory of manifests:
// every *.yaml, *.yml and *.json file directly in it (hidden files
// excluded, symbolic links followed, so a mounted ConfigMap works) holding
// policies, bindings, params, Namespaces and CRDs.
//
// [DirSource.Poll] reloads it safely against writers that are not atomic:
//
//   - a file set (names, sizes, modification times) is loaded only once two
//     consecutive scans saw it unchanged, so a file caught half-written
//     is not loaded;
//   - a reload that loses a policy or binding while the file that held it
//     still exists is refused (a truncated file looks exactly so); remove
//     the file, or move the object to another file, to delete it;
//   - any failure keeps the previous evaluator serving, and [DirSource.Health]
//     reports it until a later reload succeeds.
//
// Safe for concurrent use.
type DirSource struct {
	dir  string
	opts DirOptions

	current atomic.Pointer[served]
	health  atomic.Pointer[DirHealth]

	mu       sync.Mutex
	lastScan []fileStamp       // the previous scan
	loaded   []fileStamp       // the files of the serving evaluator
	failed   []fileStamp       // the last file set that failed to load
	owners   map[string]string // "Kind/name" of each loaded policy and binding -> file
}

// DirHealth describes the state of a [DirSource].
type DirHealth struct {
	// Generation counts successful loads; LoadedAt is the time of the one
	// serving.
	Generation int64
	LoadedAt   time.Time
	// Files, Policies and Bindings count what the serving load read.
	Files              int
	Policies, Bindings int
	// Issues are the serving evaluator's Issues, as text.
	Issues []string
	// Err is the error of the last reload attempt, nil if it succeeded.
	Err error
}

// fileStamp identifies one version of a file.
type fileStamp struct {
	path    string
	size    int64
	modTime time.Time
}

// NewDirSource loads dir at once; it fails when the directory cannot be
// loaded.
func NewDirSource(dir string, opts DirOptions) (*DirSource, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &DirSource{dir: dir, opts: opts}
	s.current.Store(&served{})
	stamps, err := scanDir(dir)
	if err != nil {
		return nil, err
	}
	s.lastScan = stamps
	if err := s.load(stamps); err != nil {
		return nil, err
	}
	return s, nil
}

// Current returns the evaluator being served and its generation.
func (s *DirSource) Current() (*policy.Evaluator, int64) {
	c := s.current.Load()
	return c.ev, c.gen
}

// Health returns the state of the last reload.
func (s *DirSource) Health() DirHealth { return *s.health.Load() }

// Run polls every interval until ctx is done.
func (s *DirSource) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = s.Poll()
		}
	}
}

// Poll scans the directory once. It reloads when the file set differs
// from the one loaded and equals the previous scan; it reports whether it
// reloaded, and the error of a reload that failed.
func (s *DirSource) Poll() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	stamps, err := scanDir(s.dir)
	if err != nil {
		return false, s.fail(err)
	}
	stable := slices.Equal(stamps, s.lastScan)
	s.lastScan = stamps
	if !stable || slices.Equal(stamps, s.loaded) || slices.Equal(stamps, s.failed) {
		return false, nil
	}
	if err := s.load(stamps); err != nil {
		return false, err
	}
	return true, nil
}

// load compiles the files of stamps and serves the result; s.mu is held
// (or s is not shared yet).
func (s *DirSource) load(stamps []fileStamp) error {
	if len(stamps) == 0 {
		s.failed = stamps
		return s.fail(fmt.Errorf("%s: no *.yaml, *.yml or *.json files", s.dir))
	}
	all := &manifest.Set{}
	owners := map[string]string{}
	for _, st := range stamps {
		m, err := s.opts.Loader.LoadFiles(st.path)
		if err != nil {
			s.failed = stamps
			return s.fail(err)
		}
		for _, p := range m.Policies {
			owners["ValidatingAdmissionPolicy/"+p.Name] = st.path
		}
		for _, b := range m.Bindings {
			owners["ValidatingAdmissionPolicyBinding/"+b.Name] = st.path
		}
		for _, p := range m.MutatingPolicies {
			owners["MutatingAdmissionPolicy/"+p.Name] = st.path
		}
		for _, b := range m.MutatingBindings {
			owners["MutatingAdmissionPolicyBinding/"+b.Name] = st.path
		}
		all.Policies = append(all.Policies, m.Policies...)
		all.Bindings = append(all.Bindings, m.Bindings...)
		all.MutatingPolicies = append(all.MutatingPolicies, m.MutatingPolicies...)
		all.MutatingBindings = append(all.MutatingBindings, m.MutatingBindings...)
		all.Namespaces = append(all.Namespaces, m.Namespaces...)
		all.CRDs = append(all.CRDs, m.CRDs...)
		all.Objects = append(all.Objects, m.Objects...)
	}
	if err := lost(s.owners, owners, stamps); err != nil {
		s.failed = stamps
		return s.fail(err)
	}
	ev, err := s.compile(all)
	if err != nil {
		s.failed = stamps
		return s.fail(err)
	}
	next := &served{ev: ev, gen: s.current.Load().gen + 1}
	h := &DirHealth{Generation: next.gen, LoadedAt: time.Now(), Files: len(stamps), Policies: len(all.Policies), Bindings: len(all.Bindings)}
	for _, iss := range ev.Issues() {
		h.Issues = append(h.Issues, iss.Error())
	}
	s.current.Store(next)
	s.health.Store(h)
	s.loaded, s.failed, s.owners = stamps, nil, owners
	s.opts.Metrics.reloaded(next.gen, nil)
	s.opts.Logger.Info("policies loaded", "dir", s.dir, "generation", next.gen, "files", h.Files,
		"policies", h.Policies, "bindings", h.Bindings, "issues", len(h.Issues))
	return nil
}

// lost refuses a reload that drops a policy or binding whose file is
// still there.
func lost(before, after map[string]string, stamps []fileStamp) error {
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(before)) {
		if _, ok := after[key]; ok {
			continue
		}
		file := before[key]
		if slices.ContainsFunc(stamps, func(st fileStamp) bool { return st.path == file }) {
			kind, name, _ := strings.Cut(key, "/")
			errs = append(errs, fmt.Errorf("%s %q is gone from %s, which still exists (caught half-written?); "+
				"remove the file, or move the object to another file, to delete it", kind, name, file))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("reload refused: %w", errors.Join(errs...))
	}
	return nil
}

// compile builds the evaluator of the manifests m.
func (s *DirSource) compile(m *manifest.Set) (*policy.Evaluator, error) {
	opts := s.opts.Options
	if opts.Params == nil {
		src, err := params.NewStatic(m.Objects...)
		if err != nil {
			return nil, fmt.Errorf("params: %w", err)
		}
		opts.Params = src
	}
	if opts.Namespaces == nil {
		known := matching.NewNamespaceMap(m.Namespaces...)
		opts.Namespaces = known
		if s.opts.AssumeNamespaces {
			opts.Namespaces = assumedNamespaces(known)
		}
	}
	if opts.CRDs == nil {
		opts.CRDs = m.CRDs
	}
	bindings := m.Bindings
	if s.opts.DryRun {
		bindings = WarnInsteadOfDeny(bindings)
	} else if opts.MutatingPolicies == nil && opts.MutatingBindings == nil {
		// MutatingAdmissionPolicies answer with a JSON patch, which the API
		// server applies when a MutatingWebhookConfiguration calls the
		// webhook; a dry run changes nothing.
		opts.MutatingPolicies, opts.MutatingBindings = m.MutatingPolicies, m.MutatingBindings
	}
	return policy.Compile(m.Policies, bindings, opts)
}

// assumedNamespaces serves the known namespaces and makes up the others
// with the label the API server sets on every Namespace.
func assumedNamespaces(known matching.NamespaceMap) matching.NamespaceGetter {
	return matching.NamespaceGetterFunc(func(_ context.Context, name string) (*corev1.Namespace, error) {
		if ns, ok := known[name]; ok {
			return ns, nil
		}
		return &corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelMetadataName: name}},
		}, nil
	})
}

// fail records a failed reload; the previous evaluator keeps serving.
func (s *DirSource) fail(err error) error {
	var h DirHealth
	if prev := s.health.Load(); prev != nil {
		h = *prev
	}
	h.Err = err
	s.health.Store(&h)
	s.opts.Metrics.reloaded(h.Generation, err)
	s.opts.Logger.Error("reload failed; still serving the previous policies", "dir", s.dir, "generation", h.Generation, "error", err)
	return err
}

// scanDir lists the configuration files of dir in name order.
func scanDir(dir string) ([]fileStamp, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var stamps []fileStamp
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		switch strings.ToLower(filepath.Ext(name)) {
		case ".yaml", ".yml", ".json":
		default:
			continue
		}
		path := filepath.Join(dir, name)
		info, err := os.Stat(path) // follows symbolic links
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed while scanning, or a dangling link
		}
		if err != nil {
			return nil, err
		}
		if !info.Mode().IsRegular() {
			continue
		}
		stamps = append(stamps, fileStamp{path: path, size: info.Size(), modTime: info.ModTime()})
	}
	return stamps, nil
}
