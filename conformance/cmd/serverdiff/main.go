// Command serverdiff judges vapkit against a real kube-apiserver: for each
// case file it installs the case's namespaces, CRDs, parameter objects,
// policies and bindings on the server, waits until they are in effect,
// sends the case's request as a dryRun=All create or update, and compares
// the server's answer with vapkit's decision for the same case.
//
//	go run ./cmd/serverdiff -kubeconfig /work/kas/kubeconfig ../policy/testdata/mutating cmd/serverdiff/testdata
//
// vapkit builds its request with [policy.Evaluator.Request] from the same
// manifest the server receives (so vapkit defaults built-in objects as the
// server decodes them), with the user the server saw (a SelfSubjectReview
// under the same impersonation), the namespaces and parameter objects as
// the server stores them, and for UPDATE the old object as the server
// stored it.
//
// Compared: allowed or denied; the status code, reason and message of a
// denial; the warnings; and for an admitted request the object the server
// returns (mutated and defaulted) against vapkit's (Decision.Object, or the
// request's object when no mutation changed it), without the fields the
// server's registry sets after admission (metadata.uid, resourceVersion,
// creationTimestamp, generation, managedFields). Audit annotations never
// reach a client, so they are not compared.
//
// The server must be a scratch one: serverdiff first deletes every admission
// policy, binding and CRD on it. It is used through the admin credentials
// of the kubeconfig (or
// -server and -token); a case's user is impersonated, which needs an
// authorizer that allows impersonation (servers.sh starts kube-apiserver
// with AlwaysAllow). Cases that need what a real server cannot give the
// same way are skipped with the reason: subresources, DELETE and CONNECT,
// authorizer checks, requests whose resource is not the object's own.
//
// servers.sh beside this file builds kube-apiserver and etcd from the Go
// module proxy and starts them on 127.0.0.1.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/vapkit/vapkit/conformance/gen"
	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
	"github.com/vapkit/vapkit/typecheck"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serverdiff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of an admin user (or use -server and -token)")
	server := fs.String("server", "", "API server URL, with -token")
	token := fs.String("token", "", "bearer token of an admin user, with -server")
	insecure := fs.Bool("insecure", true, "with -server: do not verify the server's certificate")
	wait := fs.Duration("wait", 30*time.Second, "longest wait for policies to take effect, per case")
	match := fs.String("run", "", "only cases whose file name matches this regular expression")
	verbose := fs.Bool("v", false, "print each case's outcome and, for differences, both answers")
	jsonOut := fs.String("json", "", "write every case's result to this file as JSON")
	seeds := fs.Int("seeds", 0, "also run the cases package gen generates from seeds 0 to N-1")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: serverdiff [flags] CASE.yaml|DIR...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 && *seeds == 0 {
		fs.Usage()
		return 2
	}
	var cfg *rest.Config
	var err error
	switch {
	case *kubeconfig != "":
		cfg, err = clientcmd.BuildConfigFromFlags("", *kubeconfig)
	case *server != "" && *token != "":
		cfg = &rest.Config{Host: *server, BearerToken: *token, TLSClientConfig: rest.TLSClientConfig{Insecure: *insecure}}
	default:
		err = errors.New("need -kubeconfig, or -server and -token")
	}
	if err != nil {
		fmt.Fprintln(stderr, "serverdiff:", err)
		return 2
	}
	var re *regexp.Regexp
	if *match != "" {
		if re, err = regexp.Compile(*match); err != nil {
			fmt.Fprintln(stderr, "serverdiff: -run:", err)
			return 2
		}
	}
	files, err := caseFiles(fs.Args(), re)
	if err != nil {
		fmt.Fprintln(stderr, "serverdiff:", err)
		return 2
	}
	if *seeds > 0 {
		dir, err := os.MkdirTemp("", "serverdiff-gen-")
		if err != nil {
			fmt.Fprintln(stderr, "serverdiff:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		for seed := range uint64(*seeds) {
			c := gen.Generate(seed)
			f := filepath.Join(dir, c.Name+".yaml")
			if err := os.WriteFile(f, c.YAML, 0o644); err != nil {
				fmt.Fprintln(stderr, "serverdiff:", err)
				return 1
			}
			if re == nil || re.MatchString(filepath.Base(f)) {
				files = append(files, f)
			}
		}
	}
	cfg.QPS, cfg.Burst = 200, 400
	r, err := newRunner(cfg, *wait)
	if err != nil {
		fmt.Fprintln(stderr, "serverdiff:", err)
		return 1
	}
	ctx := context.Background()
	if err := r.setup(ctx); err != nil {
		fmt.Fprintln(stderr, "serverdiff: setup:", err)
		return 1
	}
	var results []*result
	counts := map[string]int{}
	for _, f := range files {
		res := r.runCase(ctx, f)
		results = append(results, res)
		counts[res.Outcome]++
		if *verbose || res.Outcome == outcomeDiffers || res.Outcome == outcomeError {
			fmt.Fprintf(stdout, "%-8s %s (%s) %s\n", res.Outcome, res.Name, res.Took, res.Note)
			for _, d := range res.Diffs {
				fmt.Fprintf(stdout, "    %s\n", strings.ReplaceAll(d, "\n", "\n    "))
			}
		}
	}
	if err := r.teardown(ctx); err != nil {
		fmt.Fprintln(stderr, "serverdiff: removing the probe:", err)
	}
	if *jsonOut != "" {
		data, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(*jsonOut, append(data, '\n'), 0o644); err != nil {
			fmt.Fprintln(stderr, "serverdiff:", err)
		}
	}
	fmt.Fprintf(stdout, "%d cases: %d same, %d differ, %d skipped, %d errors\n",
		len(results), counts[outcomeSame], counts[outcomeDiffers], counts[outcomeSkipped], counts[outcomeError])
	if counts[outcomeDiffers]+counts[outcomeError] > 0 {
		return 1
	}
	return 0
}

// caseFiles lists the case files among args (files, or directories whose
// *.yaml files are taken, sorted).
func caseFiles(args []string, re *regexp.Regexp) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		m, err := filepath.Glob(filepath.Join(a, "*.yaml"))
		if err != nil {
			return nil, err
		}
		sort.Strings(m)
		out = append(out, m...)
	}
	if re != nil {
		out = slices.DeleteFunc(out, func(f string) bool { return !re.MatchString(filepath.Base(f)) })
	}
	return out, nil
}

const (
	outcomeSame    = "same"
	outcomeDiffers = "differs"
	outcomeSkipped = "skipped"
	outcomeError   = "error"
)

// result is one case's outcome.
type result struct {
	Name    string
	Outcome string
	Note    string   `json:",omitempty"`
	Diffs   []string `json:",omitempty"`
	Took    time.Duration
	// Server and Vapkit are both answers, for differences.
	Server *answer `json:",omitempty"`
	Vapkit *answer `json:",omitempty"`
}

// answer is what a client learns about an admission: the decision, the
// status of a denial, the warnings and the returned object.
type answer struct {
	Allowed  bool
	Code     int32          `json:",omitempty"`
	Reason   string         `json:",omitempty"`
	Message  string         `json:",omitempty"`
	Warnings []string       `json:",omitempty"`
	Object   map[string]any `json:",omitempty"`
}

// warnings collects the warnings of the requests sent through one client.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 {
		return
	}
	w.mu.Lock()
	w.list = append(w.list, text)
	w.mu.Unlock()
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

type runner struct {
	cfg   *rest.Config
	dyn   dynamic.Interface
	kube  kubernetes.Interface
	wait  time.Duration
	seq   int
	probe []objRef // the probe's objects of the current sequence number
}

// objRef names one object the runner created, to delete it.
type objRef struct {
	gvr       schema.GroupVersionResource
	namespace string
	name      string
}

var (
	gvrNamespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	gvrCRDs       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	gvrProbe      = schema.GroupVersionResource{Version: "v1", Resource: "podtemplates"}
	gvrMAP        = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicies"}
	gvrMAPB       = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicybindings"}
	gvrVAP        = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}
	gvrVAPB       = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}
)

const (
	probeNamespace = "serverdiff-probe"
	// interceptedWait is how long a probe answered by a case's own
	// policies is polled before the case goes on: 20 times the usual
	// propagation (about 100 ms here).
	interceptedWait = 2 * time.Second
)

func newRunner(cfg *rest.Config, wait time.Duration) (*runner, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &runner{cfg: cfg, dyn: dyn, kube: kube, wait: wait}, nil
}

// setup checks that the server serves MutatingAdmissionPolicies in v1,
// removes every admission policy, binding and CRD a previous run may have
// left (the server must be a scratch one), and creates the probe's
// namespace.
func (r *runner) setup(ctx context.Context) error {
	if _, err := r.dyn.Resource(gvrMAP).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return fmt.Errorf("listing mutatingadmissionpolicies (admissionregistration.k8s.io/v1): %w", err)
	}
	for _, gvr := range []schema.GroupVersionResource{gvrMAPB, gvrMAP, gvrVAPB, gvrVAP, gvrCRDs} {
		if err := r.dyn.Resource(gvr).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			return fmt.Errorf("removing earlier %s: %w", gvr.Resource, err)
		}
	}
	// Probe names of this run differ from those of any earlier run.
	r.seq = int(time.Now().Unix() % 1_000_000 * 100)
	_, err := r.ensureNamespace(ctx, probeNamespace, nil, nil)
	return err
}

func (r *runner) teardown(ctx context.Context) error {
	var errs []error
	for _, ref := range r.probe {
		errs = append(errs, r.delete(ctx, ref))
	}
	r.probe = nil
	return errors.Join(errs...)
}

// ensureNamespace creates the namespace or sets its labels and annotations
// to the given ones (the server adds kubernetes.io/metadata.name), and
// returns it as stored. Namespaces are never deleted: without a namespace
// controller a deleted namespace stays Terminating.
func (r *runner) ensureNamespace(ctx context.Context, name string, labels, annotations map[string]string) (*corev1.Namespace, error) {
	nss := r.kube.CoreV1().Namespaces()
	ns, err := nss.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}}
		ns, err = nss.Create(ctx, ns, metav1.CreateOptions{})
	} else if err == nil {
		ns.Labels, ns.Annotations = labels, annotations
		ns, err = nss.Update(ctx, ns, metav1.UpdateOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("namespace %s: %w", name, err)
	}
	ns.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}
	ns.ManagedFields = nil
	return ns, nil
}

func (r *runner) resource(ref objRef) dynamic.ResourceInterface {
	if ref.namespace != "" {
		return r.dyn.Resource(ref.gvr).Namespace(ref.namespace)
	}
	return r.dyn.Resource(ref.gvr)
}

func (r *runner) delete(ctx context.Context, ref objRef) error {
	zero := int64(0) // no kubelet finishes a graceful deletion here
	err := r.resource(ref).Delete(ctx, ref.name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %s/%s: %w", ref.gvr.Resource, ref.namespace, ref.name, err)
	}
	return nil
}

// create creates obj (unstructured content) as the admin and returns it as
// stored.
func (r *runner) create(ctx context.Context, ref objRef, obj map[string]any) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: obj}
	out, err := r.resource(ref).Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating %s %s/%s: %w", ref.gvr.Resource, ref.namespace, ref.name, err)
	}
	return out, nil
}

// toMap turns a typed object into unstructured content with apiVersion and
// kind set, without status.
func toMap(obj runtime.Object, apiVersion, kind string) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	m["apiVersion"], m["kind"] = apiVersion, kind
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
		delete(md, "resourceVersion")
	}
	return m, nil
}

// installProbe replaces the probe's policies by new ones with the next
// sequence number, created after the case's objects: a MAP that labels
// PodTemplates in the probe namespace and a VAP that denies them with a
// message naming the label. Informers deliver each resource's events in
// order, so once the probe answers with the new number the server has seen
// every earlier policy and binding (of both kinds) and every earlier
// deletion.
//
// When the case's own policies answer the probe (they match every
// resource), installProbe waits interceptedWait and says so in its note.
func (r *runner) installProbe(ctx context.Context) (note string, err error) {
	if err := r.teardown(ctx); err != nil {
		return "", err
	}
	r.seq++
	name := fmt.Sprintf("serverdiff-probe-%d", r.seq)
	label := fmt.Sprintf("serverdiff-%d", r.seq)
	match := map[string]any{
		"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": probeNamespace}},
		"resourceRules": []any{map[string]any{
			"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"podtemplates"},
		}},
	}
	objs := []struct {
		gvr schema.GroupVersionResource
		obj map[string]any
	}{
		{gvrMAP, map[string]any{
			"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{
				"matchConstraints":   match,
				"failurePolicy":      "Fail",
				"reinvocationPolicy": "Never",
				"mutations": []any{map[string]any{
					"patchType": "ApplyConfiguration",
					"applyConfiguration": map[string]any{
						"expression": fmt.Sprintf(`Object{metadata: Object.metadata{labels: {%q: "ok"}}}`, label),
					},
				}},
			},
		}},
		{gvrMAPB, map[string]any{
			"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicyBinding",
			"metadata": map[string]any{"name": name},
			"spec":     map[string]any{"policyName": name},
		}},
		{gvrVAP, map[string]any{
			"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{
				"matchConstraints": match,
				"failurePolicy":    "Fail",
				"validations": []any{map[string]any{
					"expression": "false",
					"messageExpression": fmt.Sprintf(`"probe %d " + (has(object.metadata.labels) && %q in object.metadata.labels ? "mutated" : "unmutated")`,
						r.seq, label),
				}},
			},
		}},
		{gvrVAPB, map[string]any{
			"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
			"metadata": map[string]any{"name": name},
			"spec":     map[string]any{"policyName": name, "validationActions": []any{"Deny"}},
		}},
	}
	for _, o := range objs {
		ref := objRef{gvr: o.gvr, name: name}
		if _, err := r.create(ctx, ref, o.obj); err != nil {
			return "", err
		}
		r.probe = append(r.probe, ref)
	}
	want := fmt.Sprintf("binding '%s' denied request: probe %d mutated", name, r.seq)
	probe := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "PodTemplate", "metadata": map[string]any{"name": "probe", "namespace": probeNamespace},
		"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "probe"}}}},
	}}
	start := time.Now()
	deadline := start.Add(r.wait)
	var last error
	var intercepted time.Time
	for time.Now().Before(deadline) {
		_, err := r.dyn.Resource(gvrProbe).Namespace(probeNamespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), want) {
			return "", nil
		}
		// A case whose policies match every resource may answer the
		// probe before the probe's own policies do; then only time tells.
		if err == nil || !strings.Contains(err.Error(), "serverdiff-probe") {
			if intercepted.IsZero() {
				intercepted = time.Now()
			} else if time.Since(intercepted) > interceptedWait {
				return fmt.Sprintf("the case's policies answer the probe; waited %v", time.Since(start).Round(time.Millisecond)), nil
			}
		}
		last = err
		time.Sleep(20 * time.Millisecond)
	}
	return "", fmt.Errorf("policies did not take effect within %v (probe %d answered %v)", r.wait, r.seq, last)
}

// caseState is what a case installed, to remove it afterwards.
type caseState struct {
	created []objRef // in creation order
	crds    []string
}

func (r *runner) cleanup(ctx context.Context, st *caseState) error {
	var errs []error
	// Policies and bindings go first, and are out of effect before the
	// other objects are deleted, which the case's policies might deny.
	isPolicy := func(ref objRef) bool { return ref.gvr.Group == "admissionregistration.k8s.io" }
	var others []objRef
	for _, ref := range slices.Backward(st.created) {
		if isPolicy(ref) {
			errs = append(errs, r.delete(ctx, ref))
		} else {
			others = append(others, ref)
		}
	}
	if len(others) > 0 {
		if _, err := r.installProbe(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	for _, ref := range others {
		errs = append(errs, r.delete(ctx, ref))
	}
	for _, name := range st.crds {
		errs = append(errs, r.delete(ctx, objRef{gvr: gvrCRDs, name: name}))
	}
	// A CRD's deletion waits for its instances to be removed; wait until it
	// is gone so that the next case can define it again.
	deadline := time.Now().Add(r.wait)
	for _, name := range st.crds {
		for time.Now().Before(deadline) {
			_, err := r.dyn.Resource(gvrCRDs).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}

func (r *runner) runCase(ctx context.Context, path string) (res *result) {
	start := time.Now()
	res = &result{Name: path}
	defer func() { res.Took = time.Since(start).Round(time.Millisecond) }()
	st := &caseState{}
	defer func() {
		if err := r.cleanup(ctx, st); err != nil && res.Outcome != outcomeError {
			res.Outcome, res.Note = outcomeError, "cleanup: "+err.Error()
		}
	}()
	c, skip, err := loadCase(path)
	if err != nil {
		res.Outcome, res.Note = outcomeError, err.Error()
		return res
	}
	if skip != "" {
		res.Outcome, res.Note = outcomeSkipped, skip
		return res
	}
	srv, vk, note, err := r.judge(ctx, c, st)
	if err != nil {
		res.Outcome, res.Note = outcomeError, err.Error()
		return res
	}
	if note != "" {
		res.Note = note
	}
	res.Server, res.Vapkit = srv, vk
	res.Diffs = compare(srv, vk)
	if len(res.Diffs) == 0 {
		res.Outcome = outcomeSame
		res.Server, res.Vapkit = nil, nil
	} else {
		res.Outcome = outcomeDiffers
	}
	return res
}

// kase is a parsed case file.
type kase struct {
	set     *manifest.Set
	mapper  policy.ResourceMapper
	req     *admissionv1.AdmissionRequest
	obj     *unstructured.Unstructured // CREATE and UPDATE
	oldObj  *unstructured.Unstructured // UPDATE
	gvr     schema.GroupVersionResource
	nsd     bool // the resource is namespaced
	objects []*unstructured.Unstructured
}

func loadCase(path string) (*kase, string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	if strings.Contains(string(raw), "authorizer") {
		return nil, "authorizer checks: the server's authorizer answers for itself", nil
	}
	set, err := manifest.LoadFiles(path)
	if err != nil {
		return nil, "", err
	}
	if len(set.Reviews) != 1 || set.Reviews[0].Request == nil {
		return nil, "", fmt.Errorf("%s: want one AdmissionReview with a request, have %d", path, len(set.Reviews))
	}
	req := set.Reviews[0].Request
	c := &kase{set: set, req: req}
	switch {
	case req.SubResource != "":
		return nil, "subresource " + req.SubResource, nil
	case req.Operation != admissionv1.Create && req.Operation != admissionv1.Update:
		return nil, "operation " + string(req.Operation), nil
	case req.RequestKind != nil || req.RequestResource != nil:
		return nil, "converted request (requestKind/requestResource)", nil
	}
	if c.mapper, err = manifest.NewResourceMapper(set.CRDs...); err != nil {
		return nil, "", err
	}
	decode := func(raw runtime.RawExtension) (*unstructured.Unstructured, error) {
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(raw.Raw, &u.Object); err != nil {
			return nil, err
		}
		return u, nil
	}
	if c.obj, err = decode(req.Object); err != nil {
		return nil, "", fmt.Errorf("%s: object: %w", path, err)
	}
	if req.Operation == admissionv1.Update {
		if c.oldObj, err = decode(req.OldObject); err != nil {
			return nil, "", fmt.Errorf("%s: oldObject: %w", path, err)
		}
	}
	if c.obj.GetGenerateName() != "" && c.obj.GetName() == "" {
		return nil, "generateName", nil
	}
	if c.gvr, c.nsd, err = c.mapper.ResourceFor(c.obj.GroupVersionKind()); err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	if c.gvr != schema.GroupVersionResource(req.Resource) {
		return nil, fmt.Sprintf("request resource %v is not the object's %v", req.Resource, c.gvr), nil
	}
	if c.nsd && c.obj.GetNamespace() == "" {
		c.obj.SetNamespace(req.Namespace)
		if c.obj.GetNamespace() == "" {
			c.obj.SetNamespace(metav1.NamespaceDefault)
		}
	}
	if c.oldObj != nil && c.nsd && c.oldObj.GetNamespace() == "" {
		c.oldObj.SetNamespace(c.obj.GetNamespace())
	}
	for _, o := range set.Objects {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			return nil, "", fmt.Errorf("%s: object %T is not unstructured", path, o)
		}
		if u.GroupVersionKind().Group == "vapkit.dev" {
			return nil, "vapkit-only document " + u.GetKind(), nil
		}
		c.objects = append(c.objects, u)
	}
	return c, "", nil
}

// judge installs the case, sends its request to the server and evaluates it
// with vapkit.
func (r *runner) judge(ctx context.Context, c *kase, st *caseState) (*answer, *answer, string, error) {
	// CRDs first, and wait until they are established.
	for _, crd := range c.set.CRDs {
		obj := withSchemas(crd.DeepCopy().Object)
		if _, err := r.create(ctx, objRef{gvr: gvrCRDs, name: crd.GetName()}, obj); err != nil {
			return nil, nil, "", err
		}
		st.crds = append(st.crds, crd.GetName())
		if err := r.waitEstablished(ctx, crd.GetName()); err != nil {
			return nil, nil, "", err
		}
	}
	// Namespaces: the case's, with its labels; any other one used gets
	// none of its own.
	namespaces := map[string]*corev1.Namespace{}
	for _, ns := range c.set.Namespaces {
		got, err := r.ensureNamespace(ctx, ns.Name, ns.Labels, ns.Annotations)
		if err != nil {
			return nil, nil, "", err
		}
		namespaces[ns.Name] = got
	}
	need := []string{c.obj.GetNamespace()}
	for _, o := range c.objects {
		need = append(need, o.GetNamespace())
	}
	for _, name := range need {
		if _, ok := namespaces[name]; ok || name == "" {
			continue
		}
		got, err := r.ensureNamespace(ctx, name, nil, nil)
		if err != nil {
			return nil, nil, "", err
		}
		namespaces[name] = got
	}
	// Parameter objects, as the server stores them.
	var stored []runtime.Object
	for _, o := range c.objects {
		gvr, nsd, err := c.mapper.ResourceFor(o.GroupVersionKind())
		if err != nil {
			continue // a custom kind without its CRD cannot exist
		}
		o = o.DeepCopy()
		if nsd && o.GetNamespace() == "" {
			o.SetNamespace(metav1.NamespaceDefault)
			if _, ok := namespaces[metav1.NamespaceDefault]; !ok {
				got, err := r.ensureNamespace(ctx, metav1.NamespaceDefault, nil, nil)
				if err != nil {
					return nil, nil, "", err
				}
				namespaces[metav1.NamespaceDefault] = got
			}
		}
		ref := objRef{gvr: gvr, namespace: o.GetNamespace(), name: o.GetName()}
		got, err := r.create(ctx, ref, o.Object)
		if err != nil {
			return nil, nil, "", err
		}
		st.created = append(st.created, ref)
		got.SetManagedFields(nil)
		stored = append(stored, got)
	}
	// The old object of an UPDATE, created before the policies exist.
	var oldStored *unstructured.Unstructured
	if c.oldObj != nil {
		// The previous case's policies must be gone first: the probe
		// answers once their deletions are in effect.
		if _, err := r.installProbe(ctx); err != nil {
			return nil, nil, "", err
		}
		ref := objRef{gvr: c.gvr, namespace: c.oldObj.GetNamespace(), name: c.oldObj.GetName()}
		if c.gvr == gvrNamespaces {
			// Namespaces are relabelled, never deleted.
			ns, err := r.ensureNamespace(ctx, c.oldObj.GetName(), c.oldObj.GetLabels(), c.oldObj.GetAnnotations())
			if err != nil {
				return nil, nil, "", fmt.Errorf("old object: %w", err)
			}
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ns)
			if err != nil {
				return nil, nil, "", err
			}
			oldStored = &unstructured.Unstructured{Object: m}
		} else {
			if err := r.delete(ctx, ref); err != nil {
				return nil, nil, "", err
			}
			o := c.oldObj.DeepCopy()
			o.SetResourceVersion("")
			got, err := r.create(ctx, ref, o.Object)
			if err != nil {
				return nil, nil, "", fmt.Errorf("old object: %w", err)
			}
			st.created = append(st.created, ref)
			oldStored = got
		}
	}
	// Policies and bindings, mutating first. Each one the server refuses
	// is compared with what vapkit's API validation (package typecheck)
	// says of it; the case goes no further when either side refuses one.
	const arv1 = "admissionregistration.k8s.io/v1"
	var srvRefusals, vkRefusals []string
	install := func(gvr schema.GroupVersionResource, obj runtime.Object, name, kind string, vkErrs field.ErrorList) error {
		m, err := toMap(obj, arv1, kind)
		if err != nil {
			return err
		}
		ref := objRef{gvr: gvr, name: name}
		var srvText, vkText string
		if _, err := r.resource(ref).Create(ctx, &unstructured.Unstructured{Object: m}, metav1.CreateOptions{}); err != nil {
			srvText = err.Error()
		} else {
			st.created = append(st.created, ref)
		}
		if len(vkErrs) > 0 {
			vkText = fmt.Sprintf("%s.admissionregistration.k8s.io %q is invalid: %v", kind, name, vkErrs.ToAggregate())
		}
		if srvText != "" || vkText != "" {
			srvRefusals = append(srvRefusals, srvText)
			vkRefusals = append(vkRefusals, vkText)
		}
		return nil
	}
	for _, p := range c.set.MutatingPolicies {
		if err := install(gvrMAP, p, p.Name, "MutatingAdmissionPolicy", typecheck.ValidateMutatingPolicy(nil, p)); err != nil {
			return nil, nil, "", err
		}
	}
	for _, b := range c.set.MutatingBindings {
		if err := install(gvrMAPB, b, b.Name, "MutatingAdmissionPolicyBinding", typecheck.ValidateMutatingBinding(b)); err != nil {
			return nil, nil, "", err
		}
	}
	for _, p := range c.set.Policies {
		if err := install(gvrVAP, p, p.Name, "ValidatingAdmissionPolicy", typecheck.ValidatePolicy(nil, p)); err != nil {
			return nil, nil, "", err
		}
	}
	for _, b := range c.set.Bindings {
		if err := install(gvrVAPB, b, b.Name, "ValidatingAdmissionPolicyBinding", typecheck.ValidateBinding(b)); err != nil {
			return nil, nil, "", err
		}
	}
	if len(srvRefusals) > 0 {
		srv := &answer{Message: "refused: " + strings.Join(srvRefusals, "; ")}
		vk := &answer{Message: "refused: " + strings.Join(vkRefusals, "; ")}
		return srv, vk, "policies refused", nil
	}
	note, err := r.installProbe(ctx)
	if err != nil {
		return nil, nil, "", err
	}

	// The user the server sees.
	ui := c.req.UserInfo
	client, warn, err := r.clientAs(ui)
	if err != nil {
		return nil, nil, "", err
	}
	user, err := r.whoAmI(ctx, ui)
	if err != nil {
		return nil, nil, "", err
	}

	// The server's answer; parameter informers may lag the probe, so an
	// answer that says so is asked again.
	var srv *answer
	deadline := time.Now().Add(r.wait)
	for {
		srv, err = r.send(ctx, client, warn, c, oldStored)
		if err != nil {
			return nil, nil, "", err
		}
		if time.Now().After(deadline) {
			break
		}
		if strings.Contains(srv.Message, "not yet synced") {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		// The plugin resolves a paramKind through a discovery cache
		// refreshed on its own schedule; a CRD's kind may be missing
		// from it for a while. A new probe makes the policies be
		// configured again.
		if len(c.set.CRDs) > 0 && strings.Contains(srv.Message, "failed to find resource referenced by paramKind") {
			time.Sleep(time.Second)
			if _, err := r.installProbe(ctx); err != nil {
				return nil, nil, "", err
			}
			continue
		}
		break
	}

	// vapkit's answer on the same inputs.
	src, err := params.NewStatic(stored...)
	if err != nil {
		return nil, nil, "", err
	}
	ev, err := policy.Compile(c.set.Policies, c.set.Bindings, policy.Options{
		Params:           src,
		Namespaces:       namespaceMap(namespaces),
		CRDs:             c.set.CRDs,
		MutatingPolicies: c.set.MutatingPolicies,
		MutatingBindings: c.set.MutatingBindings,
	})
	if err != nil {
		return nil, nil, "", fmt.Errorf("vapkit: %w", err)
	}
	var old runtime.Object
	if oldStored != nil {
		o := oldStored.DeepCopy()
		o.SetManagedFields(nil)
		old = o
	}
	op, opts := c.req.Operation, runtime.Object(&metav1.CreateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "CreateOptions"}, DryRun: []string{metav1.DryRunAll}})
	if op == admissionv1.Update {
		opts = &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "UpdateOptions"}, DryRun: []string{metav1.DryRunAll}}
	}
	obj := c.obj.DeepCopy()
	if oldStored != nil {
		obj.SetResourceVersion(oldStored.GetResourceVersion())
	}
	vreq, err := ev.Request(op, obj, old, policy.RequestOptions{UID: string(c.req.UID), UserInfo: user, DryRun: true, Options: opts})
	if err != nil {
		return nil, nil, "", fmt.Errorf("vapkit request: %w", err)
	}
	d, err := ev.Evaluate(ctx, vreq)
	if err != nil {
		return nil, nil, "", fmt.Errorf("vapkit: %w", err)
	}
	vk := &answer{Allowed: d.Allowed, Warnings: d.Warnings}
	if d.Status != nil {
		vk.Code, vk.Reason, vk.Message = d.Status.Code, string(d.Status.Reason), d.Status.Message
	}
	if d.Allowed {
		final := d.Object
		if final == nil {
			final = vreq.Object
		}
		if vk.Object, err = objectMap(final); err != nil {
			return nil, nil, "", err
		}
	}
	return srv, vk, note, nil
}

// withSchemas gives every version of a CRD without a schema one that keeps
// any field, since apiextensions.k8s.io/v1 requires a schema and the shared
// cases, written for the in-process plugin, often have none. vapkit gets
// the CRD as written.
func withSchemas(crd map[string]any) map[string]any {
	versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
	for i, v := range versions {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if _, has := m["schema"]; !has {
			m["schema"] = map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
			versions[i] = m
		}
	}
	if versions != nil {
		_ = unstructured.SetNestedSlice(crd, versions, "spec", "versions")
	}
	return crd
}

func (r *runner) waitEstablished(ctx context.Context, name string) error {
	deadline := time.Now().Add(r.wait)
	for time.Now().Before(deadline) {
		u, err := r.dyn.Resource(gvrCRDs).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("CRD %s not established within %v", name, r.wait)
}

type namespaceMap map[string]*corev1.Namespace

func (n namespaceMap) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if ns, ok := n[name]; ok {
		return ns, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
}

// impersonation is the impersonation config of a case's user; the admin
// itself for a request without a user.
func impersonation(ui authenticationv1.UserInfo) rest.ImpersonationConfig {
	if ui.Username == "" {
		return rest.ImpersonationConfig{}
	}
	ic := rest.ImpersonationConfig{UserName: ui.Username, UID: ui.UID, Groups: ui.Groups}
	if len(ui.Extra) > 0 {
		ic.Extra = map[string][]string{}
		for k, v := range ui.Extra {
			ic.Extra[k] = v
		}
	}
	return ic
}

func (r *runner) clientAs(ui authenticationv1.UserInfo) (dynamic.Interface, *warnings, error) {
	cfg := rest.CopyConfig(r.cfg)
	cfg.Impersonate = impersonation(ui)
	w := &warnings{}
	cfg.WarningHandler = w
	dyn, err := dynamic.NewForConfig(cfg)
	return dyn, w, err
}

// whoAmI returns the user the server sees under the case's impersonation.
func (r *runner) whoAmI(ctx context.Context, ui authenticationv1.UserInfo) (authenticationv1.UserInfo, error) {
	cfg := rest.CopyConfig(r.cfg)
	cfg.Impersonate = impersonation(ui)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	ssr, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, fmt.Errorf("selfsubjectreview: %w", err)
	}
	return ssr.Status.UserInfo, nil
}

// send sends the case's request as a dry run and returns the server's
// answer.
func (r *runner) send(ctx context.Context, client dynamic.Interface, warn *warnings, c *kase, oldStored *unstructured.Unstructured) (*answer, error) {
	res := client.Resource(c.gvr)
	var ri dynamic.ResourceInterface = res
	if c.nsd {
		ri = res.Namespace(c.obj.GetNamespace())
	}
	obj := c.obj.DeepCopy()
	warn.take()
	var out *unstructured.Unstructured
	var err error
	if c.req.Operation == admissionv1.Update {
		obj.SetResourceVersion(oldStored.GetResourceVersion())
		out, err = ri.Update(ctx, obj, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	} else {
		out, err = ri.Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	}
	a := &answer{Warnings: warn.take()}
	if err != nil {
		var se apierrors.APIStatus
		if !errors.As(err, &se) {
			return nil, err
		}
		s := se.Status()
		a.Code, a.Reason, a.Message = s.Code, string(s.Reason), s.Message
		return a, nil
	}
	a.Allowed = true
	a.Object = out.Object
	return a, nil
}

func objectMap(obj runtime.Object) (map[string]any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.DeepCopy().Object, nil
	}
	// Through JSON, so that numbers compare as the server's do.
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// registrySet are the metadata fields the server's registry sets after
// admission (or that differ by when the object was stored); they are not
// compared.
var registrySet = []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"}

func normalized(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	data, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	if md, ok := out["metadata"].(map[string]any); ok {
		for _, f := range registrySet {
			delete(md, f)
		}
	}
	return out
}

func compare(srv, vk *answer) []string {
	var d []string
	if srv.Allowed != vk.Allowed {
		d = append(d, fmt.Sprintf("allowed: server %v, vapkit %v", srv.Allowed, vk.Allowed))
	}
	if srv.Code != vk.Code {
		d = append(d, fmt.Sprintf("code: server %d, vapkit %d", srv.Code, vk.Code))
	}
	if srv.Reason != vk.Reason {
		d = append(d, fmt.Sprintf("reason: server %q, vapkit %q", srv.Reason, vk.Reason))
	}
	if srv.Message != vk.Message {
		d = append(d, fmt.Sprintf("message:\n  server: %s\n  vapkit: %s", srv.Message, vk.Message))
	}
	if !slices.Equal(srv.Warnings, vk.Warnings) {
		d = append(d, fmt.Sprintf("warnings:\n  server: %q\n  vapkit: %q", srv.Warnings, vk.Warnings))
	}
	if srv.Allowed && vk.Allowed {
		if diff := cmp.Diff(normalized(srv.Object), normalized(vk.Object)); diff != "" {
			d = append(d, "object (-server +vapkit):\n"+diff)
		}
	}
	return d
}
