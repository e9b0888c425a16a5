package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

// maxReviewBytes bounds the AdmissionReview a client may send. The API
// server limits objects to about 3 MiB; a review can carry two of them.
const maxReviewBytes = 8 << 20

// server answers admission reviews with the evaluator compiled from a
// directory, which a watcher may replace at any time.
type server struct {
	dir    string
	dryRun bool
	logger *log.Logger

	// evaluator is the evaluator requests use; never nil after newServer.
	evaluator atomic.Pointer[policy.Evaluator]
	// health describes the last load attempt.
	health atomic.Pointer[health]

	mu   sync.Mutex  // serialises reloads
	seen []fileStamp // files of the last load attempt, successful or not
}

// health is what /healthz reports.
type health struct {
	generation int       // successful loads so far
	loadedAt   time.Time // of the serving evaluator
	files      int
	policies   int
	bindings   int
	issues     []string
	err        error // of the last attempt; nil when it succeeded
}

// fileStamp identifies one version of a configuration file.
type fileStamp struct {
	path    string
	size    int64
	modTime time.Time
}

// newServer loads dir; it fails if the directory cannot be loaded.
func newServer(dir string, dryRun bool, logger *log.Logger) (*server, error) {
	s := &server{dir: dir, dryRun: dryRun, logger: logger}
	if err := s.reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// handler routes /validate and /healthz.
func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/validate", s.serveValidate)
	mux.HandleFunc("/healthz", s.serveHealthz)
	return mux
}

// watch polls the directory every interval and reloads it when it changed,
// until ctx is done.
func (s *server) watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.reloadIfChanged(); err != nil {
				s.logger.Printf("reload failed, still serving the previous policies: %v", err)
			}
		}
	}
}

// reloadIfChanged reloads the directory if its files changed since the last
// attempt. It reports whether it tried.
func (s *server) reloadIfChanged() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	stamps, err := scanDir(s.dir)
	if err == nil && slices.Equal(stamps, s.seen) {
		return false, nil
	}
	return true, s.reloadLocked(stamps, err)
}

// reload loads the directory unconditionally.
func (s *server) reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	stamps, err := scanDir(s.dir)
	return s.reloadLocked(stamps, err)
}

func (s *server) reloadLocked(stamps []fileStamp, scanErr error) error {
	s.seen = stamps
	ev, h, err := s.load(stamps, scanErr)
	if err != nil {
		var next health
		if prev := s.health.Load(); prev != nil {
			next = *prev
		}
		next.err = err
		s.health.Store(&next)
		return err
	}
	if prev := s.health.Load(); prev != nil {
		h.generation = prev.generation + 1
	} else {
		h.generation = 1
	}
	s.evaluator.Store(ev)
	s.health.Store(h)
	for _, issue := range h.issues {
		s.logger.Printf("policy issue: %s", issue)
	}
	return nil
}

// load compiles the files of stamps.
func (s *server) load(stamps []fileStamp, scanErr error) (*policy.Evaluator, *health, error) {
	if scanErr != nil {
		return nil, nil, scanErr
	}
	if len(stamps) == 0 {
		return nil, nil, fmt.Errorf("%s: no *.yaml, *.yml or *.json files", s.dir)
	}
	paths := make([]string, len(stamps))
	for i, st := range stamps {
		paths[i] = st.path
	}
	m, err := manifest.LoadFiles(paths...)
	if err != nil {
		return nil, nil, err
	}
	src, err := params.NewStatic(m.Objects...)
	if err != nil {
		return nil, nil, fmt.Errorf("params: %w", err)
	}
	bindings := m.Bindings
	if s.dryRun {
		bindings = warnInsteadOfDeny(bindings)
	}
	ev, err := policy.Compile(m.Policies, bindings, policy.Options{
		Params:     src,
		Namespaces: matching.NewNamespaceMap(m.Namespaces...),
		CRDs:       m.CRDs,
	})
	if err != nil {
		return nil, nil, err
	}
	h := &health{loadedAt: time.Now(), files: len(stamps), policies: len(m.Policies), bindings: len(m.Bindings)}
	for _, issue := range ev.Issues() {
		h.issues = append(h.issues, issue.Error())
	}
	return ev, h, nil
}

// warnInsteadOfDeny returns copies of bindings whose Deny action is replaced
// by Warn, for dry-run mode.
func warnInsteadOfDeny(bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) []*admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	out := make([]*admissionregistrationv1.ValidatingAdmissionPolicyBinding, len(bindings))
	for i, b := range bindings {
		if b == nil || !slices.Contains(b.Spec.ValidationActions, admissionregistrationv1.Deny) {
			out[i] = b
			continue
		}
		c := b.DeepCopy()
		var actions []admissionregistrationv1.ValidationAction
		for _, a := range c.Spec.ValidationActions {
			if a == admissionregistrationv1.Deny {
				a = admissionregistrationv1.Warn
			}
			if !slices.Contains(actions, a) {
				actions = append(actions, a)
			}
		}
		c.Spec.ValidationActions = actions
		out[i] = c
	}
	return out
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

// serveHealthz reports the state of the last load.
func (s *server) serveHealthz(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	h := s.health.Load()
	var b strings.Builder
	status := http.StatusOK
	if h.err != nil {
		status = http.StatusServiceUnavailable
		fmt.Fprintf(&b, "reload failed: %v\n", h.err)
		fmt.Fprintf(&b, "still serving generation %d loaded at %s\n", h.generation, h.loadedAt.UTC().Format(time.RFC3339))
	} else {
		fmt.Fprintf(&b, "ok generation %d loaded at %s: %d files, %d policies, %d bindings\n",
			h.generation, h.loadedAt.UTC().Format(time.RFC3339), h.files, h.policies, h.bindings)
	}
	for _, issue := range h.issues {
		fmt.Fprintf(&b, "issue: %s\n", issue)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprint(w, b.String())
}

// serveValidate answers one AdmissionReview.
func (s *server) serveValidate(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			http.Error(w, fmt.Sprintf("unsupported content type %q, want application/json", ct), http.StatusUnsupportedMediaType)
			return
		}
	}
	var in admissionv1.AdmissionReview
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxReviewBytes)).Decode(&in); err != nil {
		http.Error(w, "decoding AdmissionReview: "+err.Error(), http.StatusBadRequest)
		return
	}
	if gvk := in.GroupVersionKind(); gvk != admissionv1.SchemeGroupVersion.WithKind("AdmissionReview") {
		http.Error(w, fmt.Sprintf("unsupported review %q, want admission.k8s.io/v1 AdmissionReview", gvk.GroupVersion().String()+" "+gvk.Kind), http.StatusBadRequest)
		return
	}
	if in.Request == nil {
		http.Error(w, "AdmissionReview has no request", http.StatusBadRequest)
		return
	}
	out := admissionv1.AdmissionReview{
		TypeMeta: in.TypeMeta,
		Response: s.review(r.Context(), in.Request),
	}
	body, err := json.Marshal(out)
	if err != nil {
		http.Error(w, "encoding AdmissionReview: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// review evaluates req with the current evaluator.
func (s *server) review(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	ev := s.evaluator.Load()
	pr, err := policy.RequestFromAdmission(req)
	if err != nil {
		return s.errored(req.UID, http.StatusBadRequest, err)
	}
	d, err := ev.Evaluate(ctx, pr)
	if err != nil {
		code := int32(http.StatusBadRequest)
		if ctx.Err() != nil {
			code = http.StatusInternalServerError
		}
		return s.errored(req.UID, code, err)
	}
	resp := d.AdmissionResponse(req.UID)
	if s.dryRun && !resp.Allowed {
		msg := "request denied"
		if resp.Result != nil {
			msg = resp.Result.Message
		}
		resp.Allowed = true
		resp.Result = nil
		resp.Warnings = append(resp.Warnings, "dry-run: would deny: "+msg)
	}
	return resp
}

// errored answers a request that could not be evaluated: a denial with
// code, or in dry-run mode an allowed response with a warning.
func (s *server) errored(uid types.UID, code int32, err error) *admissionv1.AdmissionResponse {
	if s.dryRun {
		return &admissionv1.AdmissionResponse{UID: uid, Allowed: true, Warnings: []string{"dry-run: would deny: " + err.Error()}}
	}
	reason := metav1.StatusReasonBadRequest
	if code == http.StatusInternalServerError {
		reason = metav1.StatusReasonInternalError
	}
	return &admissionv1.AdmissionResponse{UID: uid, Result: &metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    code,
		Reason:  reason,
		Message: err.Error(),
	}}
}
