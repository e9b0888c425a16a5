// Package auditcmd is the audit command of examples/audit and
// examples/vapkit (vapkit audit).
package auditcmd

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/audit"
	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

// Main runs the command with args (without the program name), writing the
// report to stdout and problems to stderr, and returns the exit status: 0
// on success, 1 on any error.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if err := run(ctx, args, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "audit:", err)
		return 1
	}
	return 0
}

func run(ctx context.Context, args []string, out, stderr io.Writer) error {
	fset := flag.NewFlagSet("audit", flag.ContinueOnError)
	fset.SetOutput(stderr)
	policyDir := fset.String("policies", "", "directory of policies, bindings, params, namespaces and CRDs")
	objectDir := fset.String("objects", "", "directory of the manifests to evaluate, searched recursively")
	details := fset.Bool("details", false, "list the objects behind every count")
	if err := fset.Parse(args); err != nil {
		return err
	}
	if *policyDir == "" || *objectDir == "" {
		return errors.New("both -policies and -objects are required")
	}
	if fset.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fset.Args())
	}
	policies, err := loadDir(*policyDir, false)
	if err != nil {
		return err
	}
	dump, err := loadDir(*objectDir, true)
	if err != nil {
		return err
	}
	rep, err := evaluate(ctx, policies, dump)
	if err != nil {
		return err
	}
	return rep.write(out, *details)
}

// loadDir reads the manifests of dir, in path order.
func loadDir(dir string, recursive bool) (*manifest.Set, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && (!recursive || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
			if !strings.HasPrefix(d.Name(), ".") {
				paths = append(paths, path)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s: no *.yaml, *.yml or *.json files", dir)
	}
	return manifest.LoadFiles(paths...)
}

// object is one object of the dump and the request that creates it.
type object struct {
	id  string // e.g. "apps/v1 Deployment team-a/web"
	req *policy.Request
}

// row is the summary of one binding.
type row struct {
	policy, binding string
	evaluated       int
	denied, warned  []finding
	audited, errs   []finding
}

// finding is one object counted in a column, with what it got.
type finding struct{ id, text string }

// report is the result of an audit.
type report struct {
	rows    []*row
	skipped []finding
	objects int
}

// evaluate evaluates every object of dump against every binding of
// policies.
func evaluate(ctx context.Context, policies, dump *manifest.Set) (*report, error) {
	crds := append(slices.Clone(policies.CRDs), dump.CRDs...)
	// The Tester knows how a cluster with these CRDs maps kinds to
	// resources; it builds the requests.
	requests, err := policy.NewTester(&manifest.Set{CRDs: crds}, policy.Options{})
	if err != nil {
		return nil, err
	}
	rep := &report{}
	objs := rep.requests(requests, dump)

	src, err := params.NewStatic(paramObjects(policies.Objects, dump.Objects)...)
	if err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	namespaces := namespaceMap{}
	for _, ns := range append(slices.Clone(dump.Namespaces), policies.Namespaces...) {
		namespaces[ns.Name] = ns
	}
	opts := policy.Options{Params: src, Namespaces: namespaces, CRDs: crds}

	byPolicy := map[string]*admissionregistrationv1.ValidatingAdmissionPolicy{}
	for _, p := range policies.Policies {
		byPolicy[p.Name] = p
	}
	bindings := slices.Clone(policies.Bindings)
	slices.SortFunc(bindings, func(a, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) int {
		return cmp.Or(cmp.Compare(a.Spec.PolicyName, b.Spec.PolicyName), cmp.Compare(a.Name, b.Name))
	})
	bound := map[string]bool{}
	for _, b := range bindings {
		p, ok := byPolicy[b.Spec.PolicyName]
		if !ok {
			rep.rows = append(rep.rows, &row{policy: b.Spec.PolicyName, binding: b.Name,
				errs: []finding{{id: "-", text: "the policy does not exist"}}})
			continue
		}
		bound[p.Name] = true
		r, err := evaluateBinding(ctx, p, b, objs, opts)
		if err != nil {
			return nil, err
		}
		rep.rows = append(rep.rows, r)
	}
	for _, p := range policies.Policies {
		if !bound[p.Name] {
			rep.rows = append(rep.rows, &row{policy: p.Name, binding: "-"})
		}
	}
	slices.SortStableFunc(rep.rows, func(a, b *row) int {
		return cmp.Or(cmp.Compare(a.policy, b.policy), cmp.Compare(a.binding, b.binding))
	})
	return rep, nil
}

// namespaceMap serves namespaces from memory; a namespace it lacks exists
// with only the label the API server always sets.
type namespaceMap map[string]*corev1.Namespace

// GetNamespace returns the namespace called name.
func (m namespaceMap) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if ns, ok := m[name]; ok {
		return ns, nil
	}
	ns := &corev1.Namespace{}
	ns.APIVersion, ns.Kind = "v1", "Namespace"
	ns.Name = name
	ns.Labels = map[string]string{corev1.LabelMetadataName: name}
	return ns, nil
}

// paramObjects merges the param candidates of both directories; the first
// list wins when both hold the same object.
func paramObjects(first, second []runtime.Object) []runtime.Object {
	seen := map[string]bool{}
	var out []runtime.Object
	for _, o := range append(slices.Clone(first), second...) {
		acc, err := meta.Accessor(o)
		if err != nil {
			continue
		}
		key := o.GetObjectKind().GroupVersionKind().String() + " " + acc.GetNamespace() + "/" + acc.GetName()
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, o)
	}
	return out
}

// requests builds a CREATE request for every object of the dump, sorted by
// kind, namespace and name; objects of unknown kinds are recorded as
// skipped.
func (rep *report) requests(t *policy.Tester, dump *manifest.Set) []object {
	var all []runtime.Object
	for _, ns := range dump.Namespaces {
		all = append(all, ns)
	}
	for _, crd := range dump.CRDs {
		all = append(all, crd)
	}
	all = append(all, dump.Objects...)
	var objs []object
	for _, o := range all {
		req, err := t.Request(admissionv1.Create, o, nil)
		if err != nil {
			rep.skipped = append(rep.skipped, finding{id: describe(o), text: err.Error()})
			continue
		}
		id := requestID(req)
		objs = append(objs, object{id: id, req: req})
	}
	slices.SortStableFunc(objs, func(a, b object) int { return cmp.Compare(a.id, b.id) })
	slices.SortStableFunc(rep.skipped, func(a, b finding) int { return cmp.Compare(a.id, b.id) })
	rep.objects = len(objs)
	return objs
}

// requestID names the object of a request, e.g.
// "apps/v1 Deployment team-a/web".
func requestID(r *policy.Request) string {
	name := r.Name
	if r.Namespace != "" && (r.Kind.Group != "" || r.Kind.Kind != "Namespace") {
		name = r.Namespace + "/" + name
	}
	return r.Kind.GroupVersion().String() + " " + r.Kind.Kind + " " + name
}

// describe names an object, e.g. "apps/v1 Deployment team-a/web".
func describe(o runtime.Object) string {
	gvk := o.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		if _, ok := o.(*corev1.Namespace); ok {
			gvk = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
		}
	}
	name := "?"
	if acc, err := meta.Accessor(o); err == nil {
		name = acc.GetName()
		if ns := acc.GetNamespace(); ns != "" {
			name = ns + "/" + name
		}
	}
	return gvk.GroupVersion().String() + " " + gvk.Kind + " " + name
}

// evaluateBinding evaluates every object against one binding of p.
func evaluateBinding(ctx context.Context, p *admissionregistrationv1.ValidatingAdmissionPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, objs []object, opts policy.Options) (*row, error) {
	r := &row{policy: p.Name, binding: b.Name}
	ev, err := policy.Compile([]*admissionregistrationv1.ValidatingAdmissionPolicy{p}, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{b}, opts)
	if err != nil {
		return nil, fmt.Errorf("policy %s, binding %s: %w", p.Name, b.Name, err)
	}
	for _, o := range objs {
		d, err := ev.Evaluate(ctx, o.req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			r.errs = append(r.errs, finding{o.id, err.Error()})
			continue
		}
		matched := false
		var errs []string
		for _, tr := range d.Trace {
			if tr.Outcome == policy.NotMatched {
				continue
			}
			matched = true
			if tr.Outcome == policy.Errored {
				msg := "error"
				if tr.Err != nil {
					msg = tr.Err.Error()
				}
				for _, e := range tr.Expressions {
					if e.Err != "" {
						msg = e.Path.String() + ": " + e.Err
					}
				}
				errs = append(errs, msg)
			}
		}
		if matched || !d.Allowed {
			r.evaluated++
		}
		if !d.Allowed {
			r.denied = append(r.denied, finding{o.id, d.Status.Message})
		}
		if len(d.Warnings) > 0 {
			r.warned = append(r.warned, finding{o.id, strings.Join(d.Warnings, "; ")})
		}
		if v, ok := d.AuditAnnotations[audit.ValidationFailureKey]; ok {
			r.audited = append(r.audited, finding{o.id, v})
		}
		if len(errs) > 0 {
			r.errs = append(r.errs, finding{o.id, strings.Join(errs, "; ")})
		}
	}
	return r, nil
}

// write prints the summary table and, with details, the findings.
func (rep *report) write(out io.Writer, details bool) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "POLICY\tBINDING\tEVALUATED\tDENIED\tWARNED\tAUDITED\tERRORS")
	for _, r := range rep.rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\n", r.policy, r.binding, r.evaluated, len(r.denied), len(r.warned), len(r.audited), len(r.errs))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\n%d objects evaluated as CREATE, %d skipped\n", rep.objects, len(rep.skipped))
	for _, s := range rep.skipped {
		fmt.Fprintf(&b, "skipped %s: %s\n", s.id, s.text)
	}
	if details {
		for _, r := range rep.rows {
			if len(r.denied)+len(r.warned)+len(r.audited)+len(r.errs) == 0 {
				continue
			}
			fmt.Fprintf(&b, "\n%s / %s:\n", r.policy, r.binding)
			for _, col := range []struct {
				label    string
				findings []finding
			}{{"DENY", r.denied}, {"WARN", r.warned}, {"AUDIT", r.audited}, {"ERROR", r.errs}} {
				for _, f := range col.findings {
					fmt.Fprintf(&b, "  %-5s %s: %s\n", col.label, f.id, f.text)
				}
			}
		}
	}
	_, err := out.Write(b.Bytes())
	return err
}
