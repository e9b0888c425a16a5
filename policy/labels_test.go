package policy_test

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/policy"
)

// TestTenantBindings checks policies bound per tenant: the policy bound to
// the request's tenant denies; the policy bound to other tenants only is
// ruled out by the label index and left out of the trace, unless
// TraceUnmatched asks for every binding; a binding with an invalid
// selector still reports its error.
func TestTenantBindings(t *testing.T) {
	ps, bs := benchPolicies(3, 3)
	for i := range ps {
		ps[i].Spec.Validations = ps[i].Spec.Validations[:1]
	}
	tenant := func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, name string, sel *metav1.LabelSelector) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
		b = b.DeepCopy()
		b.Name += "-" + name
		b.Spec.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: sel, ObjectSelector: &metav1.LabelSelector{}}
		return b
	}
	tenantSel := func(t string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"tenant": t}}
	}
	bindings := []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		tenant(bs[0], "shop", tenantSel("shop")), tenant(bs[0], "blog", tenantSel("blog")),
		tenant(bs[1], "blog", tenantSel("blog")), tenant(bs[1], "wiki", tenantSel("wiki")),
		tenant(bs[2], "bad", &metav1.LabelSelector{MatchLabels: map[string]string{"tenant": "bad value"}}),
	}
	nss := matching.NewNamespaceMap(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default", Labels: map[string]string{"tenant": "shop"}}})
	req := benchRequest()
	replicas := int32(9)
	obj := req.Object.(*appsv1.Deployment).DeepCopy()
	obj.Spec.Replicas = &replicas
	req.Object = obj

	type entry struct {
		policy, binding string
		outcome         policy.Outcome
	}
	tests := []struct {
		name      string
		unmatched bool
		want      []entry
	}{
		{"default", false, []entry{
			{"p00000", "p00000-binding-blog", policy.NotMatched},
			{"p00000", "p00000-binding-shop", policy.Failed},
			{"p00002", "p00002-binding-bad", policy.Errored},
		}},
		{"TraceUnmatched", true, []entry{
			{"p00000", "p00000-binding-blog", policy.NotMatched},
			{"p00000", "p00000-binding-shop", policy.Failed},
			{"p00001", "p00001-binding-blog", policy.NotMatched},
			{"p00001", "p00001-binding-wiki", policy.NotMatched},
			{"p00002", "p00002-binding-bad", policy.Errored},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := policy.Compile(ps, bindings, policy.Options{Namespaces: nss, TraceUnmatched: tt.unmatched})
			if err != nil {
				t.Fatal(err)
			}
			d, err := ev.Evaluate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed {
				t.Errorf("Evaluate() allowed the request; want denied by p00000 and p00002")
			}
			var got []entry
			for _, tr := range d.Trace {
				got = append(got, entry{tr.Policy, tr.Binding, tr.Outcome})
			}
			if len(got) != len(tt.want) {
				t.Fatalf("trace = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("trace[%d] = %v, want %v", i, got[i], tt.want[i])
				}
			}
		})
	}
}
