package matching

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// labelSelectors are the selectors FuzzLabelIndex draws from: the
// indexed forms (matchLabels, In, Exists), excluding ones, invalid ones and
// requirements naming the same label twice.
var labelSelectors = []*metav1.LabelSelector{
	nil,
	{},
	{MatchLabels: map[string]string{"tenant": "a"}},
	{MatchLabels: map[string]string{"tenant": "b", "env": "prod"}},
	{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tenant", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}},
	{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpExists}}},
	{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"prod"}}}},
	{MatchLabels: map[string]string{"env": "prod"}, MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod", "dev"}}}},
	{MatchLabels: map[string]string{"bad": "bad value"}},
	{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tenant", Operator: "Bogus"}}},
}

var labelSets = []map[string]string{nil, {"tenant": "a"}, {"tenant": "b", "env": "prod"}, {"env": "dev"}, {"tenant": "c", "env": "prod"}}

func (f *fuzzInput) labelMatchResources() *admissionregistrationv1.MatchResources {
	if f.pick(10) == 0 {
		return nil
	}
	mr := &admissionregistrationv1.MatchResources{
		NamespaceSelector: pickFrom(f, labelSelectors...),
		ObjectSelector:    pickFrom(f, labelSelectors...),
		MatchPolicy:       pickFrom(f, fuzzPolicies...),
		ResourceRules:     f.rules(),
	}
	if f.pick(4) == 0 {
		mr.ExcludeResourceRules = f.rules()
	}
	return mr
}

func (f *fuzzInput) labelObject() runtime.Object {
	switch f.pick(5) {
	case 0:
		return nil
	case 1:
		return &corev1.PodExecOptions{}
	case 2:
		return (*corev1.Pod)(nil)
	default:
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: pickFrom(f, labelSets...)}}
	}
}

// fuzzPolicy is a policy and its bindings for FuzzLabelIndex.
type fuzzPolicy struct {
	policy   *admissionregistrationv1.ValidatingAdmissionPolicy
	bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
}

func (f *fuzzInput) labelPolicies() []fuzzPolicy {
	out := make([]fuzzPolicy, 1+f.pick(5))
	for i := range out {
		var p fuzzPolicy
		if f.pick(12) != 0 {
			p.policy = &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: f.labelMatchResources()}}
		}
		for range f.pick(4) {
			var b *admissionregistrationv1.ValidatingAdmissionPolicyBinding
			if f.pick(12) != 0 {
				b = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{MatchResources: f.labelMatchResources()}}
			}
			p.bindings = append(p.bindings, b)
		}
		out[i] = p
	}
	return out
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// FuzzLabelIndex checks that compiled matchers answer exactly as
// MatchPolicy and MatchBinding, and that the LabelIndex never drops a
// policy whose matching reports a match or an error.
func FuzzLabelIndex(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 1, 2, 3, 2, 1, 1, 1, 1, 2, 1, 1, 1, 2, 2, 4, 3, 2, 1, 0, 1, 2, 3, 4})
	f.Add([]byte("tenant a binds env prod with exists and in"))
	f.Add([]byte{4, 5, 7, 3, 2, 1, 1, 1, 1, 1, 1, 2, 3, 2, 5, 6, 7, 1, 2, 3, 4, 1, 2, 3, 4, 3, 3, 3, 3, 2, 1, 4, 2})

	nss := newNamespaces(
		namespace("prod", map[string]string{"tenant": "a", "env": "prod"}),
		namespace("dev", map[string]string{"tenant": "b", "env": "dev"}),
	)
	mapper := testMapper()

	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzInput{b: data}
		pols := in.labelPolicies()
		a := in.attributes()
		a.Object, a.OldObject = in.labelObject(), in.labelObject()
		var m runtime.EquivalentResourceMapper
		if in.pick(2) == 1 {
			m = mapper
		}
		opts := Options{Namespaces: nss, Resources: m}

		set := NewMatcherSet()
		entries := make([]LabelIndexEntry, len(pols))
		for i, p := range pols {
			entries[i] = LabelIndexEntry{ID: i, Policy: set.Policy(p.policy)}
			for _, b := range p.bindings {
				entries[i].Bindings = append(entries[i].Bindings, set.Binding(b))
			}
		}
		ix := set.NewLabelIndex(entries)
		sc := set.NewScratch()
		ids := make([]int, len(pols))
		for i := range ids {
			ids[i] = i
		}
		// Twice: the second request reuses the Scratch's memory.
		for round := range 2 {
			sc.Reset(a, opts)
			kept := ix.Filter(t.Context(), sc, ids, nil)
			if !slices.IsSorted(kept) {
				t.Fatalf("Filter() = %v, not in the order of ids", kept)
			}
			for i, p := range pols {
				pres, perr := MatchPolicy(t.Context(), p.policy, a, opts)
				cres, cerr := entries[i].Policy.Match(t.Context(), sc)
				if pres != cres || errText(perr) != errText(cerr) {
					t.Fatalf("round %d policy %d: Matcher.Match() = %+v, %v; MatchPolicy() = %+v, %v", round, i, cres, cerr, pres, perr)
				}
				visible := perr != nil
				for j, b := range p.bindings {
					bok, berr := MatchBinding(t.Context(), b, a, opts)
					cres, cerr := entries[i].Bindings[j].Match(t.Context(), sc)
					if bok != cres.Matched || errText(berr) != errText(cerr) {
						t.Fatalf("round %d policy %d binding %d: Matcher.Match() = %+v, %v; MatchBinding() = %v, %v", round, i, j, cres, cerr, bok, berr)
					}
					if pres.Matched && (bok || berr != nil) {
						visible = true
					}
				}
				if visible && !slices.Contains(kept, i) {
					t.Fatalf("policy %d (match %+v, %v) dropped by Filter() = %v for %+v", i, pres, perr, kept, *a)
				}
			}
		}
	})
}

// tenantPolicy is a deployments policy whose bindings select the given
// tenants' namespaces and objects labelled app=web.
func tenantPolicy(tenants ...string) (*admissionregistrationv1.ValidatingAdmissionPolicy, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: &admissionregistrationv1.MatchResources{
			NamespaceSelector: &metav1.LabelSelector{},
			ObjectSelector:    &metav1.LabelSelector{},
			ResourceRules:     []admissionregistrationv1.NamedRuleWithOperations{rule(strs("apps"), strs("v1"), strs("deployments"))},
		},
	}}
	var bs []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for _, t := range tenants {
		bs = append(bs, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			MatchResources: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tenant": t}},
				ObjectSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			},
		}})
	}
	return p, bs
}

func TestLabelIndexFilter(t *testing.T) {
	nss := newNamespaces(namespace("prod", map[string]string{"tenant": "a"}))
	failing := NamespaceGetterFunc(func(ctx context.Context, name string) (*corev1.Namespace, error) {
		return nil, errors.New("etcd is down")
	})
	web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}
	db := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}}}
	deploy := func(ns string, obj, old runtime.Object) *Attributes {
		a := attrs(gvk("apps", "v1", "Deployment"), gvr("apps", "v1", "deployments"), "")
		a.Namespace, a.Object, a.OldObject = ns, obj, old
		return a
	}

	// 0: tenant a; 1: tenants b and c; 2: tenant a and a binding without
	// matchResources; 3: policy-level selector env=prod; 4: a binding with
	// an invalid selector.
	set := NewMatcherSet()
	var entries []LabelIndexEntry
	add := func(p *admissionregistrationv1.ValidatingAdmissionPolicy, bs ...*admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
		e := LabelIndexEntry{ID: len(entries), Policy: set.Policy(p)}
		for _, b := range bs {
			e.Bindings = append(e.Bindings, set.Binding(b))
		}
		entries = append(entries, e)
	}
	p0, b0 := tenantPolicy("a")
	add(p0, b0...)
	p1, b1 := tenantPolicy("b", "c")
	add(p1, b1...)
	p2, b2 := tenantPolicy("a")
	add(p2, append(b2, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{})...)
	p3, b3 := tenantPolicy("b")
	p3.Spec.MatchConstraints.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	b3[0].Spec.MatchResources.NamespaceSelector = &metav1.LabelSelector{}
	add(p3, b3...)
	p4, b4 := tenantPolicy("b")
	b4[0].Spec.MatchResources.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad": "bad value"}}
	add(p4, b4...)
	ix := set.NewLabelIndex(entries)
	all := []int{0, 1, 2, 3, 4}

	tests := []struct {
		name string
		a    *Attributes
		ns   NamespaceGetter
		want []int
	}{
		{"tenant a, app=web", deploy("prod", web, nil), nss, []int{0, 2, 4}},
		{"tenant a, app=db", deploy("prod", db, nil), nss, []int{2, 4}},
		{"old object labelled app=web", deploy("prod", db, web), nss, []int{0, 2, 4}},
		{"missing namespace keeps all", deploy("missing", web, nil), nss, all},
		{"failed lookup keeps all", deploy("prod", web, nil), failing, all},
		{"cluster-scoped keeps all", deploy("", web, nil), nss, all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := set.NewScratch()
			sc.Reset(tt.a, Options{Namespaces: tt.ns})
			if got := ix.Filter(t.Context(), sc, all, nil); !slices.Equal(got, tt.want) {
				t.Errorf("Filter() = %v, want %v", got, tt.want)
			}
			sc.Release()
		})
	}
}

func TestMatcherSetSharesSelectors(t *testing.T) {
	set := NewMatcherSet()
	for i := range 100 {
		_, bs := tenantPolicy(fmt.Sprint("t", i%3))
		set.Policy(&admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: bs[0].Spec.MatchResources}})
		set.Binding(bs[0])
	}
	// Three tenant selectors and app=web.
	if got := set.Selectors(); got != 4 {
		t.Errorf("Selectors() = %d, want 4", got)
	}
}

func TestMatcherNamespaceLookedUpOnce(t *testing.T) {
	calls := 0
	getter := NamespaceGetterFunc(func(ctx context.Context, name string) (*corev1.Namespace, error) {
		calls++
		return namespace(name, map[string]string{"tenant": "a"}), nil
	})
	set := NewMatcherSet()
	var ms []*Matcher
	for _, tenant := range []string{"a", "b", "a", "c"} {
		_, bs := tenantPolicy(tenant)
		ms = append(ms, set.Binding(bs[0]))
	}
	sc := set.NewScratch()
	web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}
	a := attrs(gvk("apps", "v1", "Deployment"), gvr("apps", "v1", "deployments"), "")
	a.Namespace, a.Object = "prod", web
	for round := range 2 {
		sc.Reset(a, Options{Namespaces: getter})
		var got []bool
		for _, m := range ms {
			res, err := m.Match(t.Context(), sc)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, res.Matched)
		}
		if want := []bool{true, false, true, false}; !slices.Equal(got, want) {
			t.Errorf("round %d: matched = %v, want %v", round, got, want)
		}
		if calls != round+1 {
			t.Errorf("round %d: %d namespace lookups, want %d", round, calls, round+1)
		}
	}
}
