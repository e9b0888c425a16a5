package matching

import (
	"fmt"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
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
