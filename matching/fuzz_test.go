package matching

import (
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// fuzzInput turns fuzz bytes into choices from small vocabularies, so that
// random inputs hit matching rules, equivalents and selectors often.
type fuzzInput struct{ b []byte }

// pick returns a value in [0, n); 0 once the input is exhausted.
func (f *fuzzInput) pick(n int) int {
	if len(f.b) == 0 || n <= 1 {
		return 0
	}
	v := int(f.b[0]) % n
	f.b = f.b[1:]
	return v
}

func pickFrom[T any](f *fuzzInput, items ...T) T { return items[f.pick(len(items))] }

// list returns up to three picks from items; possibly empty.
func pickList[T any](f *fuzzInput, items ...T) []T {
	n := f.pick(4)
	var out []T
	for range n {
		out = append(out, pickFrom(f, items...))
	}
	return out
}

var (
	fuzzGroups    = []string{"", "apps", "extensions", "example.com", "*"}
	fuzzVersions  = []string{"v1", "v1beta1", "v2", "*"}
	fuzzResources = []string{"pods", "deployments", "namespaces", "widgets", "*", "pods/*", "*/scale", "*/*", "deployments/scale", "pods/log", "namespaces/finalize"}
	fuzzOps       = []admissionregistrationv1.OperationType{"CREATE", "UPDATE", "DELETE", "CONNECT", "*"}
	fuzzScopes    = []*admissionregistrationv1.ScopeType{nil, ptr(admissionregistrationv1.AllScopes), ptr(admissionregistrationv1.NamespacedScope), ptr(admissionregistrationv1.ClusterScope), ptr(admissionregistrationv1.ScopeType("Bogus"))}
	fuzzPolicies  = []*admissionregistrationv1.MatchPolicyType{nil, ptr(admissionregistrationv1.Exact), ptr(admissionregistrationv1.Equivalent), ptr(admissionregistrationv1.MatchPolicyType("Bogus"))}
	fuzzNames     = []string{"", "a", "b"}
	fuzzSelectors = []*metav1.LabelSelector{
		nil,
		{},
		{MatchLabels: map[string]string{"env": "prod"}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"prod"}}}},
		{MatchLabels: map[string]string{"bad": "bad value"}},
	}
	fuzzLabels = []map[string]string{nil, {"env": "prod"}, {"env": "dev"}}
)

func (f *fuzzInput) rules() []admissionregistrationv1.NamedRuleWithOperations {
	n := f.pick(3)
	var out []admissionregistrationv1.NamedRuleWithOperations
	for range n {
		out = append(out, admissionregistrationv1.NamedRuleWithOperations{
			ResourceNames: pickList(f, fuzzNames[1:]...),
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{
				Operations: pickList(f, fuzzOps...),
				Rule: admissionregistrationv1.Rule{
					APIGroups:   pickList(f, fuzzGroups...),
					APIVersions: pickList(f, fuzzVersions...),
					Resources:   pickList(f, fuzzResources...),
					Scope:       pickFrom(f, fuzzScopes...),
				},
			},
		})
	}
	return out
}

func (f *fuzzInput) matchResources() *admissionregistrationv1.MatchResources {
	if f.pick(8) == 0 {
		return nil
	}
	return &admissionregistrationv1.MatchResources{
		NamespaceSelector:    pickFrom(f, fuzzSelectors...),
		ObjectSelector:       pickFrom(f, fuzzSelectors...),
		MatchPolicy:          pickFrom(f, fuzzPolicies...),
		ResourceRules:        f.rules(),
		ExcludeResourceRules: f.rules(),
	}
}

func (f *fuzzInput) object() runtime.Object {
	switch f.pick(4) {
	case 0:
		return nil
	case 1:
		return &corev1.PodExecOptions{}
	default:
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: pickFrom(f, fuzzLabels...)}}
	}
}

func (f *fuzzInput) attributes() *Attributes {
	res := gvr(pickFrom(f, fuzzGroups[:4]...), pickFrom(f, fuzzVersions[:3]...), pickFrom(f, "pods", "deployments", "namespaces", "widgets"))
	return &Attributes{
		Operation:   string(pickFrom(f, fuzzOps[:4]...)),
		Resource:    res,
		SubResource: pickFrom(f, "", "", "scale", "log", "finalize"),
		Kind:        gvk(res.Group, res.Version, "Thing"),
		Name:        pickFrom(f, fuzzNames...),
		Namespace:   pickFrom(f, "", "prod", "dev", "missing"),
		Object:      f.object(),
		OldObject:   f.object(),
	}
}

// excludedDirectly reports whether one of the exclude rules matches the
// request as issued (including resourceNames).
func excludedDirectly(mr *admissionregistrationv1.MatchResources, a *Attributes) bool {
	for i := range mr.ExcludeResourceRules {
		r := &mr.ExcludeResourceRules[i]
		if ruleMatches(&r.RuleWithOperations, a, a.Resource) && nameMatches(r.ResourceNames, a.Name) {
			return true
		}
	}
	return false
}

// FuzzMatch checks on random policies and requests that matching never
// panics, that a request matched by an exclude rule never matches, that
// results are consistent between Match, MatchPolicy and MatchBinding, and
// that the Index never loses an entry that matches or errors.
func FuzzMatch(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1})
	f.Add([]byte("apps deployments equivalent scale"))
	f.Add([]byte{7, 1, 1, 2, 2, 1, 2, 1, 1, 1, 1, 3, 2, 2, 2, 1, 1, 2, 7, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{3, 1, 1, 2, 1, 1, 1, 3, 1, 4, 1, 1, 1, 0, 2, 1, 1, 2, 1, 3, 0, 0, 0, 0, 1, 1, 3, 1, 2, 0, 1, 2})

	nss := newNamespaces(
		namespace("prod", map[string]string{"env": "prod"}),
		namespace("dev", map[string]string{"env": "dev"}),
	)
	mapper := testMapper()

	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzInput{b: data}
		n := 1 + in.pick(4)
		entries := make([]IndexEntry, n)
		for i := range entries {
			entries[i] = IndexEntry{ID: i, MatchResources: in.matchResources()}
		}
		a := in.attributes()
		var m runtime.EquivalentResourceMapper
		if in.pick(2) == 1 {
			m = mapper
		}
		opts := Options{Namespaces: nss, Resources: m}

		ix := NewIndex(entries)
		narrow := ix.CandidatesFor(a, m)
		broad := ix.Candidates(a)
		if !slices.IsSorted(narrow) || !slices.IsSorted(broad) {
			t.Fatalf("candidates not sorted: %v, %v", narrow, broad)
		}

		for _, e := range entries {
			pol := &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: e.MatchResources}}
			pres, perr := MatchPolicy(t.Context(), pol, a, opts)
			bind := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{MatchResources: e.MatchResources}}
			bmatched, berr := MatchBinding(t.Context(), bind, a, opts)

			if perr != nil && pres != (Result{}) {
				t.Fatalf("MatchPolicy() = %+v, %v: result with error", pres, perr)
			}
			if (pres.Matched || perr != nil || bmatched || berr != nil) &&
				(!slices.Contains(narrow, e.ID) || !slices.Contains(broad, e.ID)) {
				t.Fatalf("entry %d (policy %+v, %v; binding %v, %v) missing from candidates %v / %v for %+v",
					e.ID, pres, perr, bmatched, berr, narrow, broad, *a)
			}

			mr := e.MatchResources
			if mr == nil {
				continue
			}
			res, err := Match(t.Context(), mr, a, opts)
			if err != nil && res != (Result{}) {
				t.Fatalf("Match() = %+v, %v: result with error", res, err)
			}
			if res.Matched && excludedDirectly(mr, a) {
				t.Fatalf("Match() matched a request excluded by %+v: %+v", mr.ExcludeResourceRules, *a)
			}
			if mr.NamespaceSelector != nil && mr.ObjectSelector != nil {
				if res != pres || (err == nil) != (perr == nil) {
					t.Fatalf("Match() = %+v, %v; MatchPolicy() = %+v, %v", res, err, pres, perr)
				}
				if bmatched != res.Matched || (err == nil) != (berr == nil) {
					t.Fatalf("Match() = %+v, %v; MatchBinding() = %v, %v", res, err, bmatched, berr)
				}
			}
			if res.Matched && len(mr.ResourceRules) == 0 && (res.Resource != a.Resource || res.Kind != a.Kind) {
				t.Fatalf("Match() with empty rules = %+v, want the request resource and kind", res)
			}
		}
	})
}
