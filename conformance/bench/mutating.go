package bench

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// The MAP workloads put MutatingAdmissionPolicies in front of the
// validating ones, as a 1.36+ API server chains them: every request is
// first mutated (apply configurations merged with the kind's schema, JSON
// patches, a reinvocation pass when an IfNeeded policy ran and something
// changed) and the validating policies then see the mutated object. They
// reuse the tenants of the cluster workloads: the request is a CREATE of a
// Deployment labelled tier=frontend in namespace shop (tenant shop).

// MutatingWorkload is one MAP benchmark workload: a case holding mutating
// and validating policies, and the decision both implementations must
// reach. The mutated object both must produce is upstream's, computed
// once when the benchmark is set up; every iteration of each side compares
// its result with it.
type MutatingWorkload struct {
	// Name is the sub-benchmark name, e.g. "map-cluster-100".
	Name string
	// Allowed is the expected decision; Message the denial's status
	// message, empty when allowed.
	Allowed bool
	Message string
	// MutatingPolicies and ValidatingPolicies count the case's policies.
	MutatingPolicies, ValidatingPolicies int
	// Invocations is the number of mutating (policy, binding, param)
	// invocations the request causes, the reinvocation pass included.
	Invocations int
	// Shape says what the workload contains in one line.
	Shape string
	build func() ([]byte, error)
}

// Case builds the workload's case in the shared case format.
func (w MutatingWorkload) Case() ([]byte, error) {
	if w.build == nil {
		return nil, fmt.Errorf("workload %q has no case", w.Name)
	}
	return w.build()
}

// MutatingWorkloads returns the MAP workloads in a fixed order:
//
//   - map-mutate-only-10: the ten tenant MAPs, all applying, no
//     validating policy: the mutating path alone;
//   - map-cluster-10: the ten tenant MAPs, then the ten cluster VAPs and
//     one checking what the MAPs set;
//   - map-cluster-100: 100 MAPs of which ten apply (the others fail by
//     namespace selector, object selector, operation or resource as in
//     cluster-100), then the eleven VAPs;
//   - map-reinvocation: a sidecar injector between two IfNeeded policies
//     that read the containers, so the reinvocation pass changes the
//     object again, then a VAP checking the result;
//   - map-1000-containers: the ten tenant MAPs and eleven VAPs on a
//     Deployment of 1,000 containers.
func MutatingWorkloads() []MutatingWorkload {
	small := func() *appsv1.Deployment { return tenantDeployment(2, "1.0") }
	return []MutatingWorkload{
		{Name: "map-mutate-only-10", Allowed: true, MutatingPolicies: 10, Invocations: 10,
			Shape: "CREATE of a 2-container Deployment; 10 MAPs (7 apply configurations: labels, keyed container merges, securityContext and scheduling defaults; 3 JSON patches (annotations, nodeSelector and tolerations, replicas from a ConfigMap param), 3 tenant bindings each, all apply; no VAP",
			build: func() ([]byte, error) { return buildMutatingCase(tenantMAPs(0), nil, small()) }},
		{Name: "map-cluster-10", Allowed: true, MutatingPolicies: 10, ValidatingPolicies: 11, Invocations: 10,
			Shape: "CREATE of a 2-container Deployment; the 10 tenant MAPs, all apply; then the 10 cluster VAPs and 1 checking the mutations on the mutated object",
			build: func() ([]byte, error) { return buildMutatingCase(tenantMAPs(0), mutatedVAPs(), small()) }},
		{Name: "map-cluster-100", Allowed: true, MutatingPolicies: 100, ValidatingPolicies: 11, Invocations: 10,
			Shape: "CREATE of a 2-container Deployment; 100 MAPs: 10 apply (3 tenant bindings), 54 fail by namespaceSelector, 18 by objectSelector, 9 by operation, 9 by resource; then the 11 VAPs on the mutated object",
			build: func() ([]byte, error) { return buildMutatingCase(tenantMAPs(90), mutatedVAPs(), small()) }},
		{Name: "map-reinvocation", Allowed: true, MutatingPolicies: 3, ValidatingPolicies: 1, Invocations: 5,
			Shape: "CREATE of a 2-container Deployment; 3 MAPs: count containers (IfNeeded), inject a sidecar (Never), env on every container (IfNeeded); the sidecar makes the reinvocation pass rerun both IfNeeded MAPs and change the count; then 1 VAP checking the result",
			build: func() ([]byte, error) {
				return buildMutatingCase(reinvocationMAPs(), []policySpec{reinvocationVAP()}, small())
			}},
		{Name: "map-1000-containers", Allowed: true, MutatingPolicies: 10, ValidatingPolicies: 11, Invocations: 10,
			Shape: "CREATE of a 1,000-container Deployment; the 10 tenant MAPs (per-container merges on every container), all apply; then the 11 VAPs on the mutated object",
			build: func() ([]byte, error) {
				return buildMutatingCase(tenantMAPs(0), mutatedVAPs(), tenantDeployment(1000, "1.0"))
			}},
	}
}

// containers is the CEL path of the request's containers, and the type
// prefix of their apply configurations.
const containers = "object.spec.template.spec.containers"

// mapTemplate is one realistic mutating policy for Deployments.
type mapTemplate struct {
	name            string
	params          string // ConfigMap name read through paramRef; "" for none
	matchConditions []admissionregistrationv1.MatchCondition
	mutations       []admissionregistrationv1.Mutation
}

func applyConfiguration(expr string) admissionregistrationv1.Mutation {
	return admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
		ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: expr}}
}

func jsonPatch(expr string) admissionregistrationv1.Mutation {
	return admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeJSONPatch,
		JSONPatch: &admissionregistrationv1.JSONPatch{Expression: expr}}
}

// perContainer is an apply configuration merging fields into every
// container of the request by name (containers is a list keyed by name).
func perContainer(fields string) string {
	return "Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: " +
		containers + ".map(c, Object.spec.template.spec.containers{name: c.name, " + fields + "})}}}}"
}

// podSpec is an apply configuration of pod spec fields.
func podSpec(fields string) string {
	return "Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{" + fields + "}}}}"
}

var mapTemplates = [...]mapTemplate{
	{name: "tenant-labels", mutations: []admissionregistrationv1.Mutation{applyConfiguration(
		`Object{metadata: Object.metadata{labels: {"managed-by": "platform", "tenant": namespaceObject.metadata.labels["tenant"]}}}`)}},
	{name: "pod-labels", mutations: []admissionregistrationv1.Mutation{applyConfiguration(
		`Object{spec: Object.spec{template: Object.spec.template{metadata: Object.spec.template.metadata{labels: {"tenant": string(namespaceObject.metadata.labels["tenant"]), "team": string(object.metadata.labels["team"])}}}}}`)}},
	{name: "cluster-env", mutations: []admissionregistrationv1.Mutation{applyConfiguration(
		perContainer(`env: [Object.spec.template.spec.containers.env{name: "CLUSTER", value: "prod-eu-1"}, Object.spec.template.spec.containers.env{name: "TENANT", value: "shop"}]`))}},
	{name: "container-security-defaults", mutations: []admissionregistrationv1.Mutation{applyConfiguration(
		perContainer(`securityContext: Object.spec.template.spec.containers.securityContext{` +
			`readOnlyRootFilesystem: has(c.securityContext) && has(c.securityContext.readOnlyRootFilesystem) ? c.securityContext.readOnlyRootFilesystem : true, ` +
			`allowPrivilegeEscalation: false, ` +
			`seccompProfile: Object.spec.template.spec.containers.securityContext.seccompProfile{type: "RuntimeDefault"}}`))}},
	{name: "pod-security-defaults", mutations: []admissionregistrationv1.Mutation{applyConfiguration(
		podSpec(`securityContext: Object.spec.template.spec.securityContext{runAsNonRoot: true, fsGroup: 2000, ` +
			`seccompProfile: Object.spec.template.spec.securityContext.seccompProfile{type: "RuntimeDefault"}}`))}},
	{name: "image-pull-policy", matchConditions: []admissionregistrationv1.MatchCondition{
		{Name: "has-latest-or-unset", Expression: containers + ".exists(c, !has(c.imagePullPolicy) || c.imagePullPolicy != 'Always')"},
	}, mutations: []admissionregistrationv1.Mutation{applyConfiguration(
		perContainer(`imagePullPolicy: c.image.endsWith(":latest") ? "Always" : "IfNotPresent"`))}},
	{name: "scheduling-defaults", mutations: []admissionregistrationv1.Mutation{applyConfiguration(
		podSpec(`priorityClassName: "tenant-standard", enableServiceLinks: false`))}},
	{name: "mutation-annotations", mutations: []admissionregistrationv1.Mutation{jsonPatch(
		`[JSONPatch{op: "add", path: "/metadata/annotations/" + jsonpatch.escapeKey("policy.example.com/mutated-by"), value: "platform"}, ` +
			`JSONPatch{op: "add", path: "/metadata/annotations/" + jsonpatch.escapeKey("policy.example.com/requested-by"), value: request.userInfo.username}]`)}},
	{name: "placement", mutations: []admissionregistrationv1.Mutation{jsonPatch(
		`[JSONPatch{op: "add", path: "/spec/template/spec/nodeSelector", value: {"pool": "tenant-" + namespaceObject.metadata.labels["tenant"]}}, ` +
			`JSONPatch{op: "add", path: "/spec/template/spec/tolerations", value: [{"key": "dedicated", "operator": "Equal", "value": "tenant-" + namespaceObject.metadata.labels["tenant"], "effect": "NoSchedule"}]}]`)}},
	{name: "replica-floor", params: "mutation-defaults", mutations: []admissionregistrationv1.Mutation{jsonPatch(
		`!has(object.spec.replicas) || object.spec.replicas < int(params.data.minReplicas) ? ` +
			`[JSONPatch{op: "add", path: "/spec/replicas", value: int(params.data.minReplicas)}] : []`)}},
}

// mapSpec is one mutating policy and its bindings.
type mapSpec struct {
	policy   *admissionregistrationv1.MutatingAdmissionPolicy
	bindings []*admissionregistrationv1.MutatingAdmissionPolicyBinding
}

// forResource applies t to Deployments (or the given resource) for the
// given operations, bound once per tenant like the cluster VAPs: each
// binding selects its tenant's namespaces and objects of the given tiers
// (nil: frontend and backend); suffix makes the name unique.
func (t mapTemplate) forResource(group, resource string, ops []admissionregistrationv1.OperationType, tenants, tiers []string, suffix string) mapSpec {
	name := t.name + "-" + strings.ReplaceAll(resource, "/", "-") + suffix
	if tiers == nil {
		tiers = []string{"frontend", "backend"}
	}
	p := &admissionregistrationv1.MutatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "kube-public"}},
				}},
				ObjectSelector: &metav1.LabelSelector{},
				MatchPolicy:    ptrTo(admissionregistrationv1.Equivalent),
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: ops,
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: []string{resource}},
				}}},
			},
			MatchConditions: append([]admissionregistrationv1.MatchCondition{
				{Name: "not-system-users", Expression: "!request.userInfo.username.startsWith('system:')"},
			}, t.matchConditions...),
			Mutations:          t.mutations,
			FailurePolicy:      ptrTo(admissionregistrationv1.Fail),
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
		},
	}
	if t.params != "" {
		p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	}
	s := mapSpec{policy: p}
	for _, tenant := range tenants {
		b := &admissionregistrationv1.MutatingAdmissionPolicyBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicyBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name + "-" + tenant},
			Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{
				PolicyName: name,
				MatchResources: &admissionregistrationv1.MatchResources{
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{tenantLabel: tenant}},
					ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
						{Key: tierLabel, Operator: metav1.LabelSelectorOpIn, Values: tiers},
					}},
					MatchPolicy: ptrTo(admissionregistrationv1.Equivalent),
				},
			},
		}
		if t.params != "" {
			deny := admissionregistrationv1.DenyAction
			b.Spec.ParamRef = &admissionregistrationv1.ParamRef{
				Namespace:               paramNamespace,
				Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{"policy": t.params, tenantLabel: tenant}},
				ParameterNotFoundAction: &deny,
			}
		}
		s.bindings = append(s.bindings, b)
	}
	return s
}

var createUpdate = []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}

// tenantMAPs returns the ten MAP templates for Deployments, bound to the
// request's tenant and two others, followed by others policies that do
// not apply, split as the cluster workloads split theirs (60% other
// tenants, 20% other tiers, 10% DELETE only, the rest other resources).
func tenantMAPs(others int) []mapSpec {
	var out []mapSpec
	for i := range mapTemplates {
		out = append(out, mapTemplates[i].forResource("apps", "deployments", createUpdate, []string{clusterTenant, "t-a", "t-b"}, nil, ""))
	}
	byNamespace, byObject, byOperation := others*6/10, others*2/10, others/10
	for i := range others {
		t := mapTemplates[i%len(mapTemplates)]
		suffix := fmt.Sprintf("-%d", i)
		switch {
		case i < byNamespace:
			out = append(out, t.forResource("apps", "deployments", createUpdate,
				[]string{fmt.Sprintf("t-%d-0", i), fmt.Sprintf("t-%d-1", i), fmt.Sprintf("t-%d-2", i)}, nil, suffix))
		case i < byNamespace+byObject:
			out = append(out, t.forResource("apps", "deployments", createUpdate,
				[]string{clusterTenant, fmt.Sprintf("t-%d-1", i), fmt.Sprintf("t-%d-2", i)}, []string{"batch", "worker"}, suffix))
		case i < byNamespace+byObject+byOperation:
			out = append(out, t.forResource("apps", "deployments", []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
				[]string{clusterTenant, fmt.Sprintf("t-%d-1", i), fmt.Sprintf("t-%d-2", i)}, nil, suffix))
		default:
			k := kinds[1+i%(len(kinds)-1)]
			out = append(out, t.forResource(k.group, k.resource, createUpdate,
				[]string{clusterTenant, fmt.Sprintf("t-%d-1", i), fmt.Sprintf("t-%d-2", i)}, nil, suffix))
		}
	}
	return out
}

// mutatedVAPs are the ten cluster VAPs and one checking, on the mutated
// object, what the tenant MAPs set.
func mutatedVAPs() []policySpec {
	ps := clusterPolicies(shapeFor(clusterApplying))
	check := clusterPolicy(0, kinds[0], "")
	check.policy.Name = "mutations-applied"
	check.binding.Name = "mutations-applied-binding"
	check.binding.Spec.PolicyName = check.policy.Name
	check.policy.Spec.MatchConditions = check.policy.Spec.MatchConditions[:1]
	check.policy.Spec.Validations = []admissionregistrationv1.Validation{
		{Expression: "object.metadata.labels['managed-by'] == 'platform' && object.metadata.labels.tenant == namespaceObject.metadata.labels.tenant", Message: "tenant labels missing"},
		{Expression: containers + ".all(c, c.env.exists(e, e.name == 'CLUSTER') && c.securityContext.readOnlyRootFilesystem && c.securityContext.seccompProfile.type == 'RuntimeDefault')", Message: "container defaults missing"},
		{Expression: "object.spec.template.spec.tolerations.exists(t, t.key == 'dedicated') && object.spec.replicas >= 2", Message: "placement missing"},
	}
	tenantBindings(&check, []string{clusterTenant, "t-a", "t-b"}, nil)
	return append(ps, check)
}

// reinvocationMAPs are a container counter (IfNeeded), a sidecar injector
// (Never) and a per-container env setter (IfNeeded), in that order: the
// injector changes the containers after the counter ran, so the
// reinvocation pass reruns the counter (which changes its annotation) and
// the env setter (which then has nothing to add).
func reinvocationMAPs() []mapSpec {
	tenants := []string{clusterTenant}
	count := mapTemplate{name: "a-count-containers", mutations: []admissionregistrationv1.Mutation{applyConfiguration(
		`Object{metadata: Object.metadata{annotations: {"example.com/containers": string(size(` + containers + `))}}}`)}}
	sidecar := mapTemplate{name: "b-inject-proxy", matchConditions: []admissionregistrationv1.MatchCondition{
		{Name: "no-proxy-yet", Expression: "!" + containers + ".exists(c, c.name == 'proxy')"},
	}, mutations: []admissionregistrationv1.Mutation{applyConfiguration(
		podSpec(`containers: [Object.spec.template.spec.containers{name: "proxy", image: "registry.example.com/proxy:2.1", ` +
			`ports: [Object.spec.template.spec.containers.ports{name: "proxy", containerPort: 15001}], ` +
			`securityContext: Object.spec.template.spec.containers.securityContext{runAsNonRoot: true, allowPrivilegeEscalation: false}}]`))}}
	env := mapTemplate{name: "c-env", mutations: []admissionregistrationv1.Mutation{applyConfiguration(
		perContainer(`env: [Object.spec.template.spec.containers.env{name: "MESH", value: "on"}]`))}}
	out := []mapSpec{
		count.forResource("apps", "deployments", createUpdate, tenants, nil, ""),
		sidecar.forResource("apps", "deployments", createUpdate, tenants, nil, ""),
		env.forResource("apps", "deployments", createUpdate, tenants, nil, ""),
	}
	out[0].policy.Spec.ReinvocationPolicy = admissionregistrationv1.IfNeededReinvocationPolicy
	out[2].policy.Spec.ReinvocationPolicy = admissionregistrationv1.IfNeededReinvocationPolicy
	return out
}

// reinvocationVAP checks that the count and the env saw the sidecar.
func reinvocationVAP() policySpec {
	t := policyTemplate{name: "mesh-consistent", validations: []admissionregistrationv1.Validation{
		{Expression: "object.metadata.annotations['example.com/containers'] == string(size(" + containers + "))", Message: "container count annotation is stale"},
		{Expression: containers + ".all(c, c.env.exists(e, e.name == 'MESH'))", Message: "every container needs MESH"},
	}}
	s := t.forKind(kinds[0], "")
	tenantBindings(&s, []string{clusterTenant}, nil)
	return s
}

// mutationParams are the ConfigMaps the replica-floor MAPs select for the
// request's tenant and for the other tenants of the applying policies.
func mutationParams() []runtime.Object {
	var out []runtime.Object
	for _, t := range []string{clusterTenant, "t-a", "t-b"} {
		out = append(out, &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "mutation-defaults-" + t, Namespace: paramNamespace, Labels: map[string]string{"policy": "mutation-defaults", tenantLabel: t}},
			Data:       map[string]string{"minReplicas": "4"},
		})
	}
	return out
}

// buildMutatingCase writes the MAPs and their bindings, then the cluster
// case of the VAPs (namespace, params, request).
func buildMutatingCase(ms []mapSpec, vs []policySpec, obj *appsv1.Deployment) ([]byte, error) {
	var buf bytes.Buffer
	add := func(v any) error {
		data, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		buf.WriteString("---\n")
		buf.Write(data)
		return nil
	}
	// The policies in name order, the order in which vapkit runs them (the
	// API server's is its informer's, not fixed), as the harness of
	// upstream's dispatcher runs them in file order.
	ms = slices.Clone(ms)
	slices.SortFunc(ms, func(a, b mapSpec) int { return strings.Compare(a.policy.Name, b.policy.Name) })
	for _, m := range ms {
		if err := add(m.policy); err != nil {
			return nil, err
		}
		for _, b := range m.bindings {
			if err := add(b); err != nil {
				return nil, err
			}
		}
	}
	ns := &corev1.Namespace{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: clusterNamespace, Labels: map[string]string{
			"kubernetes.io/metadata.name": clusterNamespace, tenantLabel: clusterTenant, "env": "prod",
		}},
	}
	rest, err := writeCase(vs, []*corev1.Namespace{ns}, obj, nil, append(clusterParams(), mutationParams()...))
	if err != nil {
		return nil, err
	}
	buf.Write(rest)
	return buf.Bytes(), nil
}
