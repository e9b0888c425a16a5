package matching

import (
	"fmt"
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestIndexCandidates(t *testing.T) {
	t.Parallel()
	everything := &metav1.LabelSelector{}
	mr := func(policy *admissionregistrationv1.MatchPolicyType, rules ...admissionregistrationv1.NamedRuleWithOperations) *admissionregistrationv1.MatchResources {
		return &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, MatchPolicy: policy, ResourceRules: rules}
	}
	exact := ptr(admissionregistrationv1.Exact)
	equivalent := ptr(admissionregistrationv1.Equivalent)
	createOnly := rule(strs("apps"), strs("v1"), strs("deployments"))
	createOnly.Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	excludeWidgets := mr(equivalent, rule(strs("apps"), strs("v1"), strs("deployments")))
	excludeWidgets.ExcludeResourceRules = []admissionregistrationv1.NamedRuleWithOperations{rule(strs("example.com"), strs("v2"), strs("widgets"))}
	tooMany := rule(nil, strs("*"), strs("*"))
	for i := range maxIndexKeys + 1 {
		tooMany.APIGroups = append(tooMany.APIGroups, fmt.Sprintf("g%d", i))
	}

	ix := NewIndex([]IndexEntry{
		{ID: 10, MatchResources: mr(exact, rule(strs("apps"), strs("v1"), strs("deployments")))},
		{ID: 1, MatchResources: nil},
		{ID: 2, MatchResources: &admissionregistrationv1.MatchResources{ObjectSelector: everything}},
		{ID: 3, MatchResources: mr(exact)},
		{ID: 4, MatchResources: mr(exact, rule(strs(""), strs("v1"), strs("pods", "pods/log")))},
		{ID: 5, MatchResources: mr(exact, rule(strs("*"), strs("*"), strs("*/scale")))},
		{ID: 6, MatchResources: mr(equivalent, rule(strs("extensions"), strs("v1beta1"), strs("deployments")))},
		{ID: 7, MatchResources: mr(exact, createOnly)},
		{ID: 8, MatchResources: excludeWidgets},
		{ID: 9, MatchResources: mr(exact, tooMany)},
		{ID: 4, MatchResources: mr(exact, rule(strs("apps"), strs("v1"), strs("deployments")))},
		{ID: 11, MatchResources: mr(exact, rule(strs("*"), strs("*"), strs("*")))},
	})
	m := testMapper()

	tests := []struct {
		name       string
		attrs      *Attributes
		mapper     runtime.EquivalentResourceMapper
		unknownMap bool // use Candidates instead of CandidatesFor
		want       []int
	}{
		{
			name:   "pods, no mapper",
			attrs:  req("", "v1", "pods", "", "CREATE"),
			want:   []int{1, 2, 3, 4, 5, 9, 11},
			mapper: nil,
		},
		{
			name:   "deployments create, no mapper",
			attrs:  req("apps", "v1", "deployments", "", "CREATE"),
			want:   []int{1, 2, 3, 4, 5, 7, 8, 9, 10, 11},
			mapper: nil,
		},
		{
			name:   "deployments delete, no mapper",
			attrs:  req("apps", "v1", "deployments", "", "DELETE"),
			want:   []int{1, 2, 3, 4, 5, 8, 9, 10, 11},
			mapper: nil,
		},
		{
			name:   "deployments scale, no mapper (subresources are not indexed)",
			attrs:  req("apps", "v1", "deployments", "scale", "UPDATE"),
			want:   []int{1, 2, 3, 4, 5, 8, 9, 10, 11},
			mapper: nil,
		},
		{
			name:   "deployments with mapper adds the equivalent entry",
			attrs:  req("apps", "v1", "deployments", "", "DELETE"),
			mapper: m,
			want:   []int{1, 2, 3, 4, 5, 6, 8, 9, 10, 11},
		},
		{
			name:   "widgets with mapper: excludes that may error are candidates",
			attrs:  req("example.com", "v1", "widgets", "", "DELETE"),
			mapper: m,
			want:   []int{1, 2, 3, 5, 8, 9, 11},
		},
		{
			name:       "unknown mapper: equivalent entries for the operation are candidates",
			attrs:      req("", "v1", "pods", "", "DELETE"),
			unknownMap: true,
			want:       []int{1, 2, 3, 4, 5, 6, 8, 9, 11},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []int
			if tc.unknownMap {
				got = ix.Candidates(tc.attrs)
			} else {
				got = ix.CandidatesFor(tc.attrs, tc.mapper)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("candidates(%+v) = %v, want %v", *tc.attrs, got, tc.want)
			}
		})
	}
}

func TestIndexEdgeCases(t *testing.T) {
	t.Parallel()
	var nilIndex *Index
	if got := nilIndex.Candidates(&Attributes{}); got != nil {
		t.Errorf("(*Index)(nil).Candidates() = %v, want nil", got)
	}
	if got := NewIndex(nil).Candidates(req("", "v1", "pods", "", "CREATE")); got != nil {
		t.Errorf("NewIndex(nil).Candidates() = %v, want nil", got)
	}
	ix := NewIndex([]IndexEntry{{ID: 1}})
	if got := ix.Candidates(nil); got != nil {
		t.Errorf("Candidates(nil) = %v, want nil", got)
	}
	// The result must not alias index storage.
	got := ix.Candidates(req("", "v1", "pods", "", "CREATE"))
	got[0] = 99
	if again := ix.Candidates(req("", "v1", "pods", "", "CREATE")); !slices.Equal(again, []int{1}) {
		t.Errorf("Candidates() after caller mutation = %v, want [1]", again)
	}
}
