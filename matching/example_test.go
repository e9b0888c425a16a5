package matching_test

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/matching"
)

// ExampleMatch matches a request for extensions/v1beta1 deployments against
// constraints written for apps/v1 deployments, with matchPolicy Equivalent.
func ExampleMatch() {
	equivalent := admissionregistrationv1.Equivalent
	constraints := &admissionregistrationv1.MatchResources{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
		ObjectSelector:    &metav1.LabelSelector{},
		MatchPolicy:       &equivalent,
		ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups:   []string{"apps"},
					APIVersions: []string{"v1"},
					Resources:   []string{"deployments"},
				},
			},
		}},
	}

	// The two deployments resources share storage.
	resources := runtime.NewEquivalentResourceRegistryWithIdentity(func(gr schema.GroupResource) string {
		return gr.Resource
	})
	resources.RegisterKindFor(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "",
		schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	resources.RegisterKindFor(schema.GroupVersionResource{Group: "extensions", Version: "v1beta1", Resource: "deployments"}, "",
		schema.GroupVersionKind{Group: "extensions", Version: "v1beta1", Kind: "Deployment"})

	namespaces := matching.NamespaceGetterFunc(func(_ context.Context, name string) (*corev1.Namespace, error) {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": name}}}, nil
	})
	opts := matching.Options{Namespaces: namespaces, Resources: resources}

	for _, ns := range []string{"prod", "dev"} {
		req := &matching.Attributes{
			Operation: "CREATE",
			Resource:  schema.GroupVersionResource{Group: "extensions", Version: "v1beta1", Resource: "deployments"},
			Kind:      schema.GroupVersionKind{Group: "extensions", Version: "v1beta1", Kind: "Deployment"},
			Name:      "web",
			Namespace: ns,
		}
		res, err := matching.Match(context.Background(), constraints, req, opts)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("%s: matched=%v resource=%q kind=%q\n", ns, res.Matched, res.Resource.String(), res.Kind.String())
	}
	// Output:
	// prod: matched=true resource="apps/v1, Resource=deployments" kind="apps/v1, Kind=Deployment"
	// dev: matched=false resource="/, Resource=" kind="/, Kind="
}

// ExampleMatchPolicy shows the API server's error for a policy without
// matchConstraints.
func ExampleMatchPolicy() {
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "no-constraints"}}
	_, err := matching.MatchPolicy(context.Background(), policy, &matching.Attributes{Operation: "CREATE"}, matching.Options{})
	fmt.Println(err)
	// Output:
	// policy contained no match constraints, a required field
}

// ExampleExempt lists which resources policies never see.
func ExampleExempt() {
	for _, gr := range []schema.GroupResource{
		{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"},
		{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"},
		{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"},
		{Group: "", Resource: "pods"},
	} {
		fmt.Printf("%s: %v\n", gr, matching.Exempt(gr))
	}
	// Output:
	// validatingadmissionpolicies.admissionregistration.k8s.io: true
	// validatingwebhookconfigurations.admissionregistration.k8s.io: false
	// subjectaccessreviews.authorization.k8s.io: true
	// pods: false
}

// ExampleIndex narrows many policies down to those that could apply.
func ExampleIndex() {
	rules := func(group, resource string) *admissionregistrationv1.MatchResources {
		return &admissionregistrationv1.MatchResources{
			NamespaceSelector: &metav1.LabelSelector{},
			ObjectSelector:    &metav1.LabelSelector{},
			ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource}},
				},
			}},
		}
	}
	ix := matching.NewIndex([]matching.IndexEntry{
		{ID: 0, MatchResources: rules("", "pods")},
		{ID: 1, MatchResources: rules("apps", "deployments")},
		{ID: 2, MatchResources: rules("*", "*")},
		{ID: 3, MatchResources: rules("", "configmaps")},
	})
	req := &matching.Attributes{
		Operation: "CREATE",
		Resource:  schema.GroupVersionResource{Version: "v1", Resource: "pods"},
		Namespace: "default",
	}
	fmt.Println(ix.CandidatesFor(req, nil))
	// Output:
	// [0 2]
}

// ExampleMatcherSet compiles a policy and its per-tenant bindings once,
// then decides a request: the label index rules the policy out for a
// tenant none of its bindings selects, without matching it.
func ExampleMatcherSet() {
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "replicas"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{},
				ObjectSelector:    &metav1.LabelSelector{},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule: admissionregistrationv1.Rule{
							APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"},
						},
					},
				}},
			},
		},
	}
	binding := func(tenant string) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
		return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName: "replicas",
				MatchResources: &admissionregistrationv1.MatchResources{
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tenant": tenant}},
					ObjectSelector:    &metav1.LabelSelector{},
				},
			},
		}
	}

	// At compile time.
	set := matching.NewMatcherSet()
	pm := set.Policy(policy)
	bms := []*matching.Matcher{set.Binding(binding("blue")), set.Binding(binding("green"))}
	ix := set.NewLabelIndex([]matching.LabelIndexEntry{{ID: 0, Policy: pm, Bindings: bms}})

	// Per request.
	namespaces := matching.NewNamespaceMap(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"tenant": "green"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "blog", Labels: map[string]string{"tenant": "red"}}},
	)
	sc := set.NewScratch()
	for _, ns := range []string{"shop", "blog"} {
		a := &matching.Attributes{
			Operation: "CREATE",
			Resource:  schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
			Kind:      schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
			Name:      "web", Namespace: ns,
		}
		sc.Reset(a, matching.Options{Namespaces: namespaces})
		kept := ix.Filter(context.Background(), sc, []int{0}, nil)
		fmt.Printf("%s: candidates %v", ns, kept)
		if len(kept) > 0 {
			res, err := pm.Match(context.Background(), sc)
			fmt.Printf(", policy matched=%v err=%v, bindings", res.Matched, err)
			for _, bm := range bms {
				res, err := bm.Match(context.Background(), sc)
				fmt.Printf(" %v/%v", res.Matched, err)
			}
		}
		fmt.Println()
	}
	sc.Release()
	// Output:
	// shop: candidates [0], policy matched=true err=<nil>, bindings false/<nil> true/<nil>
	// blog: candidates []
}
