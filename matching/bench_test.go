package matching

import (
	"fmt"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nonMatchingEntries returns n Equivalent entries, each for its own group
// and resource, none of which matches an apps/v1 deployments request.
func nonMatchingEntries(n int) []IndexEntry {
	equivalent := ptr(admissionregistrationv1.Equivalent)
	entries := make([]IndexEntry, n)
	for i := range entries {
		entries[i] = IndexEntry{ID: i, MatchResources: &admissionregistrationv1.MatchResources{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": fmt.Sprint(i)}},
			ObjectSelector:    &metav1.LabelSelector{},
			MatchPolicy:       equivalent,
			ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				rule(strs(fmt.Sprintf("g%d.example.com", i)), strs("v1"), strs(fmt.Sprintf("r%d", i), fmt.Sprintf("r%d/status", i))),
			},
		}}
	}
	return entries
}

// BenchmarkIndex measures the per-request cost of 10,000 policies that do
// not apply, with the index and, for comparison, with one Match each.
func BenchmarkIndex(b *testing.B) {
	const n = 10_000
	entries := nonMatchingEntries(n)
	ix := NewIndex(entries)
	m := testMapper()
	a := attrs(gvk("apps", "v1", "Deployment"), gvr("apps", "v1", "deployments"), "")

	b.Run("CandidatesFor", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if got := ix.CandidatesFor(a, m); len(got) != 0 {
				b.Fatalf("CandidatesFor() = %v, want none", got)
			}
		}
	})
	b.Run("Candidates", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			// Without the mapper every Equivalent entry for the operation
			// is a candidate.
			if got := ix.Candidates(a); len(got) != n {
				b.Fatalf("len(Candidates()) = %d, want %d", len(got), n)
			}
		}
	})
	b.Run("MatchEach", func(b *testing.B) {
		b.ReportAllocs()
		opts := Options{Resources: m}
		for b.Loop() {
			for _, e := range entries {
				if res, err := Match(b.Context(), e.MatchResources, a, opts); err != nil || res.Matched {
					b.Fatalf("Match() = %+v, %v, want no match", res, err)
				}
			}
		}
	})
}

// BenchmarkNewIndex measures building an index over 10,000 entries.
func BenchmarkNewIndex(b *testing.B) {
	entries := nonMatchingEntries(10_000)
	b.ReportAllocs()
	for b.Loop() {
		if NewIndex(entries) == nil {
			b.Fatal("NewIndex() = nil")
		}
	}
}

// BenchmarkMatch measures one matching policy with a namespace lookup and
// an equivalent-resource match, as upstream's BenchmarkMatcher.
func BenchmarkMatch(b *testing.B) {
	mr := &admissionregistrationv1.MatchResources{
		MatchPolicy:       ptr(admissionregistrationv1.Equivalent),
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ns": "ns1"}},
		ObjectSelector:    &metav1.LabelSelector{},
		ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
			rule(strs("apps"), strs("v1beta1"), strs("deployments", "deployments/scale")),
			rule(strs("extensions"), strs("v1beta1"), strs("deployments", "deployments/scale")),
		},
	}
	opts := Options{Resources: testMapper(), Namespaces: newNamespaces(namespace("ns", map[string]string{"ns": "ns1"}))}
	a := attrs(gvk("autoscaling", "v1", "Scale"), gvr("apps", "v1", "deployments"), "scale")
	b.ReportAllocs()
	for b.Loop() {
		if res, err := Match(b.Context(), mr, a, opts); err != nil || !res.Matched {
			b.Fatalf("Match() = %+v, %v, want match", res, err)
		}
	}
}

// tenantEntries returns n deployments policies with three tenant bindings
// each (tenants 3i, 3i+1, 3i+2), compiled into one set.
func tenantEntries(n int) (*MatcherSet, []LabelIndexEntry) {
	set := NewMatcherSet()
	entries := make([]LabelIndexEntry, n)
	for i := range entries {
		p, bs := tenantPolicy(fmt.Sprint("t", 3*i), fmt.Sprint("t", 3*i+1), fmt.Sprint("t", 3*i+2))
		entries[i] = LabelIndexEntry{ID: i, Policy: set.Policy(p)}
		for _, b := range bs {
			entries[i].Bindings = append(entries[i].Bindings, set.Binding(b))
		}
	}
	return set, entries
}

// BenchmarkLabelIndex measures the per-request cost of 10,000 deployments
// policies whose bindings select other tenants' namespaces: ruled out by
// the label index, and, for comparison, matched one by one with compiled
// matchers.
func BenchmarkLabelIndex(b *testing.B) {
	const n = 10_000
	set, entries := tenantEntries(n)
	ix := set.NewLabelIndex(entries)
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	nss := newNamespaces(namespace("prod", map[string]string{"tenant": "t-other", "env": "prod"}))
	a := attrs(gvk("apps", "v1", "Deployment"), gvr("apps", "v1", "deployments"), "")
	a.Namespace = "prod"
	opts := Options{Namespaces: nss}
	sc := set.NewScratch()

	b.Run("Filter", func(b *testing.B) {
		b.ReportAllocs()
		var out []int
		for b.Loop() {
			sc.Reset(a, opts)
			if out = ix.Filter(b.Context(), sc, ids, out[:0]); len(out) != 0 {
				b.Fatalf("Filter() kept %d, want 0", len(out))
			}
		}
	})
	b.Run("MatchEach", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sc.Reset(a, opts)
			for _, e := range entries {
				if res, err := e.Policy.Match(b.Context(), sc); err != nil || !res.Matched {
					b.Fatalf("policy: %v, %v", res, err)
				}
				for _, bm := range e.Bindings {
					if res, err := bm.Match(b.Context(), sc); err != nil || res.Matched {
						b.Fatalf("binding: %v, %v", res, err)
					}
				}
			}
		}
	})
}

// clusterEntries returns n deployments policies with one tenant binding
// each, shaped like the cluster workloads of conformance/bench: 60% bound
// to other tenants, 20% to tenant shop for tier in (batch, worker), 20% to
// tenant shop for tier in (frontend, backend); each binding also selects
// by tier.
func clusterEntries(n int) (*MatcherSet, []LabelIndexEntry) {
	set := NewMatcherSet()
	entries := make([]LabelIndexEntry, n)
	for i := range entries {
		tenant, tiers := fmt.Sprint("t", i), []string{"frontend", "backend"}
		switch {
		case i%10 >= 8:
			tenant = "shop"
		case i%10 >= 6:
			tenant, tiers = "shop", []string{"batch", "worker"}
		}
		p, bs := tenantPolicy(tenant)
		bs[0].Spec.MatchResources.ObjectSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: tiers},
		}}
		entries[i] = LabelIndexEntry{ID: i, Policy: set.Policy(p), Bindings: []*Matcher{set.Binding(bs[0])}}
	}
	return set, entries
}

// BenchmarkLabelIndexCluster measures Filter on 10,000 policies shaped like
// cluster-10000, all of them resource candidates; 2,000 are kept.
func BenchmarkLabelIndexCluster(b *testing.B) {
	const n = 10_000
	set, entries := clusterEntries(n)
	ix := set.NewLabelIndex(entries)
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	nss := newNamespaces(namespace("shop", map[string]string{"tenant": "shop", "kubernetes.io/metadata.name": "shop"}))
	a := attrs(gvk("apps", "v1", "Deployment"), gvr("apps", "v1", "deployments"), "")
	a.Namespace = "shop"
	a.Object = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"tier": "frontend", "app": "web", "team": "web", "env": "prod"}}}
	opts := Options{Namespaces: nss}
	sc := set.NewScratch()
	b.ReportAllocs()
	var out []int
	for b.Loop() {
		sc.Reset(a, opts)
		if out = ix.Filter(b.Context(), sc, ids, out[:0]); len(out) != n/5 {
			b.Fatalf("Filter() kept %d, want %d", len(out), n/5)
		}
	}
}
