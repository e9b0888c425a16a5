package bench

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The cluster workloads model a multi-tenant cluster: every policy is
// bound once per tenant, each binding selecting its tenant's namespaces
// with a namespaceSelector and the workloads it governs with an
// objectSelector; params are found by label selector per tenant; every
// policy has a match condition and matchPolicy Equivalent. The request is a
// CREATE (or UPDATE) of a compliant Deployment in the namespace of tenant
// "shop", so it is admitted after every applying policy has run.
const (
	clusterTenant    = "shop"
	clusterNamespace = "shop"
	// tenantLabel is the namespace label the bindings select tenants by.
	tenantLabel = "tenant"
	// tierLabel is the object label the bindings' objectSelectors read.
	tierLabel = "tier"
	// clusterApplying is how many policies apply to the request in every
	// cluster workload.
	clusterApplying = len(templates)
)

// clusterShape describes how the policies of a cluster workload of n
// policies fail to apply.
type clusterShape struct {
	applying, byNamespace, byObject, byOperation, byResource int
	// bindings is the number of tenant bindings of each policy that does
	// not apply (applying policies always have three).
	bindings int
}

// shapeFor splits n policies: ten apply; of the others 60% are ruled out
// by their bindings' namespaceSelectors (other tenants), 20% by an
// objectSelector (the request's tenant, another tier), 10% by operation
// (DELETE only) and the rest by resource (StatefulSets and the other
// workload kinds). Policies that do not apply carry three tenant bindings
// up to 1,000 policies and one at 10,000, where the upstream plugin does
// not finish starting with 30,000 bindings.
func shapeFor(n int) clusterShape {
	rest := n - clusterApplying
	s := clusterShape{applying: clusterApplying, bindings: 3}
	s.byNamespace = rest * 6 / 10
	s.byObject = rest * 2 / 10
	s.byOperation = rest / 10
	s.byResource = rest - s.byNamespace - s.byObject - s.byOperation
	if n > 1000 {
		s.bindings = 1
	}
	return s
}

func (s clusterShape) String() string {
	return fmt.Sprintf("%d policies: %d apply (3 tenant bindings, 1 selects the request); %d fail by namespaceSelector, %d by objectSelector, %d by operation, %d by resource (%d tenant binding(s) each)",
		s.applying+s.byNamespace+s.byObject+s.byOperation+s.byResource, s.applying, s.byNamespace, s.byObject, s.byOperation, s.byResource, s.bindings)
}

// clusterWorkloads returns cluster-10 to cluster-10000 and the UPDATE
// workloads of 1 and 1,000 containers.
func clusterWorkloads() []Workload {
	var out []Workload
	for _, n := range []int{10, 100, 1000, 10000} {
		s := shapeFor(n)
		out = append(out, Workload{
			Name: fmt.Sprintf("cluster-%d", n), Allowed: true, Policies: n, Evaluated: clusterApplying, Parallel: n <= 1000,
			Shape: "CREATE of a 2-container Deployment; " + s.String(),
			build: func() ([]byte, error) {
				return buildClusterCase(clusterPolicies(s), tenantDeployment(2, "1.0"), nil)
			},
		})
	}
	for _, c := range []int{1, 1000} {
		out = append(out, Workload{
			Name: fmt.Sprintf("update-%d-containers", c), Allowed: true, Policies: clusterApplying + 1, Evaluated: clusterApplying + 1, Parallel: c == 1,
			Shape: fmt.Sprintf("UPDATE of a %d-container Deployment (new image tags); the ten cluster policies plus one comparing object with oldObject, all applying", c),
			build: func() ([]byte, error) {
				ps := clusterPolicies(shapeFor(clusterApplying))
				imm := immutableSelector()
				tenantBindings(&imm, []string{clusterTenant, "t-imm-1", "t-imm-2"}, nil)
				ps = append(ps, imm)
				return buildClusterCase(ps, tenantDeployment(c, "1.1"), tenantDeployment(c, "1.0"))
			},
		})
	}
	return out
}

// clusterPolicies builds the policies of shape s, in a fixed order.
func clusterPolicies(s clusterShape) []policySpec {
	var out []policySpec
	// The applying policies: every template for Deployments, bound to the
	// request's tenant and two others.
	for i := range templates {
		p := clusterPolicy(i, kinds[0], "")
		tenantBindings(&p, []string{clusterTenant, fmt.Sprintf("t-%d-a", i), fmt.Sprintf("t-%d-b", i)}, nil)
		out = append(out, p)
	}
	others := func(j int) []string {
		ts := make([]string, s.bindings)
		for k := range ts {
			ts[k] = fmt.Sprintf("t-%d-%d", j, k)
		}
		return ts
	}
	// The request's tenant first, then others.
	withShop := func(j int) []string {
		ts := others(j)
		ts[0] = clusterTenant
		return ts
	}
	j := 0
	for range s.byNamespace {
		p := clusterPolicy(j%len(templates), kinds[0], fmt.Sprintf("-ns-%d", j))
		tenantBindings(&p, others(j), nil)
		out = append(out, p)
		j++
	}
	for range s.byObject {
		p := clusterPolicy(j%len(templates), kinds[0], fmt.Sprintf("-obj-%d", j))
		tenantBindings(&p, withShop(j), []string{"batch", "worker"})
		out = append(out, p)
		j++
	}
	for range s.byOperation {
		p := clusterPolicy(j%len(templates), kinds[0], fmt.Sprintf("-op-%d", j))
		p.policy.Spec.MatchConstraints.ResourceRules[0].Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Delete}
		tenantBindings(&p, withShop(j), nil)
		out = append(out, p)
		j++
	}
	for range s.byResource {
		k := kinds[1+j%(len(kinds)-1)]
		p := clusterPolicy(j%len(templates), k, fmt.Sprintf("-res-%d", j))
		tenantBindings(&p, withShop(j), nil)
		out = append(out, p)
		j++
	}
	return out
}

// clusterPolicy is template i for kind k, with matchPolicy Equivalent, a
// policy-level namespaceSelector leaving out the system namespaces and a
// match condition leaving out system users.
func clusterPolicy(i int, k workloadKind, suffix string) policySpec {
	p := templates[i].forKind(k, suffix)
	mc := p.policy.Spec.MatchConstraints
	mc.MatchPolicy = ptrTo(admissionregistrationv1.Equivalent)
	mc.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "kube-public"}},
	}}
	mc.ObjectSelector = &metav1.LabelSelector{}
	p.policy.Spec.MatchConditions = append([]admissionregistrationv1.MatchCondition{
		{Name: "not-system-users", Expression: "!request.userInfo.username.startsWith('system:')"},
	}, p.policy.Spec.MatchConditions...)
	return p
}

// tenantBindings replaces p's binding with one per tenant. Each selects
// its tenant's namespaces and objects of the given tiers (default
// frontend and backend); a policy with params finds them by the labels
// policy=<param name> and tenant=<tenant>.
func tenantBindings(p *policySpec, tenants, tiers []string) {
	if tiers == nil {
		tiers = []string{"frontend", "backend"}
	}
	base := p.binding
	p.bindings = nil
	for _, t := range tenants {
		b := base.DeepCopy()
		b.Name = base.Name + "-" + t
		b.Spec.MatchResources = &admissionregistrationv1.MatchResources{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{tenantLabel: t}},
			ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: tierLabel, Operator: metav1.LabelSelectorOpIn, Values: tiers},
			}},
			MatchPolicy: ptrTo(admissionregistrationv1.Equivalent),
		}
		if base.Spec.ParamRef != nil {
			deny := admissionregistrationv1.DenyAction
			b.Spec.ParamRef = &admissionregistrationv1.ParamRef{
				Namespace:               paramNamespace,
				Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{"policy": base.Spec.ParamRef.Name, tenantLabel: t}},
				ParameterNotFoundAction: &deny,
			}
		}
		p.bindings = append(p.bindings, b)
	}
	p.binding = nil
}

// tenantDeployment is a compliant Deployment of the shop tenant with n
// containers tagged tag.
func tenantDeployment(n int, tag string) *appsv1.Deployment {
	cs := make([]corev1.Container, n)
	for i := range cs {
		cs[i] = container(fmt.Sprintf("c%03d", i), fmt.Sprintf("registry.example.com/app-%03d:%s", i, tag), true)
	}
	d := deployment(3, cs)
	d.Namespace = clusterNamespace
	d.Labels[tierLabel] = "frontend"
	return d
}

// clusterParams are the ConfigMaps the parameterised policies select for
// the request's tenant and for three other tenants.
func clusterParams() []runtime.Object {
	var out []runtime.Object
	for _, t := range []string{clusterTenant, "t-0-0", "t-1-0", "t-7-a"} {
		out = append(out,
			&corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: "replica-limit-" + t, Namespace: paramNamespace, Labels: map[string]string{"policy": "replica-limit", tenantLabel: t}},
				Data:       map[string]string{"maxReplicas": "10"},
			},
			&corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: "registries-" + t, Namespace: paramNamespace, Labels: map[string]string{"policy": "registries", tenantLabel: t}},
				Data:       map[string]string{"registries": "quay.example.com/,registry.example.com/"},
			})
	}
	return out
}

// buildClusterCase writes a cluster workload's case: the request's
// namespace (tenant shop) and its params.
func buildClusterCase(ps []policySpec, obj, oldObj *appsv1.Deployment) ([]byte, error) {
	ns := &corev1.Namespace{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: clusterNamespace, Labels: map[string]string{
			"kubernetes.io/metadata.name": clusterNamespace, tenantLabel: clusterTenant, "env": "prod",
		}},
	}
	return writeCase(ps, []*corev1.Namespace{ns}, obj, oldObj, clusterParams())
}
