package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// Workload is one benchmark workload: a conformance case and the decision
// that both implementations must reach for it.
type Workload struct {
	// Name is the sub-benchmark name, e.g. "100-policies".
	Name string
	// Allowed is the expected decision.
	Allowed bool
	// Message is the status message of the denial; empty when allowed.
	Message string
	// Policies is the number of policies in the case.
	Policies int
	// Evaluated is the number of (policy, binding, param) evaluations the
	// request causes; zero when not stated.
	Evaluated int
	// Shape says what the workload contains: the request, how many
	// policies apply and why the others do not.
	Shape string
	// Parallel: the workload is also measured on every core
	// (<name>-parallel, testing.B.RunParallel).
	Parallel bool
	build    func() ([]byte, error)
}

// Case builds the workload's case in the shared case format (multi-document
// YAML). Large workloads take a moment: the 10,000-policy case is about
// 10 MB.
func (w Workload) Case() ([]byte, error) {
	if w.build == nil {
		return nil, fmt.Errorf("workload %q has no case", w.Name)
	}
	return w.build()
}

// Namespace, request name and the denial every probe-checking workload ends in.
const (
	requestNamespace = "prod"
	requestName      = "web"
	// probeDenial is the message of the probes policy on the small
	// Deployment, whose sidecar has no readinessProbe.
	probeDenial = `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'probes-deployments' with binding 'probes-deployments-binding' denied request: every container needs a readinessProbe`
	// paramNamespace holds the ConfigMaps the params policies read.
	paramNamespace = "policy-config"
)

// Workloads returns the benchmark workloads in a fixed order: first the
// original ones, each policy with one binding without selectors,
//
//   - one-policy: one matching policy with three validations;
//   - 10-policies: the ten policies of 100-policies that match;
//   - 100-policies: ten policy templates (image registry, pinned tags,
//     labels, resource limits, host namespaces, privilege, runAsNonRoot,
//     probes, and two reading ConfigMap params) applied to ten workload
//     resources; the ten for Deployments match and the probes policy denies;
//   - 10000-policies: the policy of one-policy plus 9,999 policies for other
//     resources;
//   - selector-params-20: a binding whose paramRef selector lists 20
//     ConfigMaps (out of 30), each checked;
//   - update-large: an UPDATE of a Deployment with 50 containers against
//     the ten Deployment policies and one comparing object with oldObject;
//
// then the cluster workloads, shaped like multi-tenant clusters (tenant
// bindings with namespace and object selectors, params by selector, match
// conditions, matchPolicy Equivalent; see shapeFor):
//
//   - cluster-10, cluster-100, cluster-1000, cluster-10000: ten policies
//     apply; the others target Deployments too but fail by namespace
//     selector (60%), object selector (20%) or operation (10%), or target
//     other resources (10%);
//   - update-1-containers, update-1000-containers: an UPDATE of a
//     Deployment with 1 or 1,000 containers against the ten cluster
//     policies and one comparing object with oldObject.
//
// Each workload's Shape states the same in one line.
func Workloads() []Workload {
	return append([]Workload{
		{Name: "one-policy", Allowed: true, Policies: 1, Evaluated: 1,
			Shape: "CREATE of a 2-container Deployment; 1 policy (3 validations), 1 binding, no selectors, applies",
			build: func() ([]byte, error) {
				return buildCase([]policySpec{template(0).forKind(kinds[0], "")}, smallDeployment(), nil, nil)
			}},
		{Name: "10-policies", Policies: 10, Evaluated: 10, Message: probeDenial,
			Shape: "CREATE of a 2-container Deployment; 10 policies, 1 binding each, no selectors, all apply, one denies",
			build: func() ([]byte, error) {
				return buildCase(matrix(1), smallDeployment(), nil, nil)
			}},
		{Name: "100-policies", Policies: 100, Evaluated: 10, Message: probeDenial,
			Shape: "CREATE of a 2-container Deployment; 100 policies, 1 binding each, no selectors; 10 apply (one denies), 90 fail by resource",
			build: func() ([]byte, error) {
				return buildCase(matrix(len(kinds)), smallDeployment(), nil, nil)
			}},
		{Name: "10000-policies", Allowed: true, Policies: 10000, Evaluated: 1,
			Shape: "CREATE of a 2-container Deployment; 10,000 policies, 1 binding each, no selectors; 1 applies, 9,999 fail by resource",
			build: func() ([]byte, error) {
				return buildCase(tenThousand(), smallDeployment(), nil, nil)
			}},
		{Name: "selector-params-20", Allowed: true, Policies: 1, Evaluated: 20,
			Shape: "CREATE of a 2-container Deployment; 1 policy whose binding selects 20 of 30 ConfigMaps as params, evaluated once per param",
			build: func() ([]byte, error) {
				return buildCase([]policySpec{selectorPolicy()}, smallDeployment(), nil, selectorParams())
			}},
		{Name: "update-large", Allowed: true, Policies: 11, Evaluated: 11,
			Shape: "UPDATE of a 50-container Deployment; 11 policies, 1 binding each, no selectors, all apply",
			build: func() ([]byte, error) {
				old := largeDeployment(4, "1.0")
				return buildCase(append(matrix(1), immutableSelector()), largeDeployment(6, "1.1"), old, nil)
			}},
	}, clusterWorkloads()...)
}

// CompileCase returns a case with n policies (the ten templates applied to
// the workload kinds in turn, names made unique) for compile benchmarks.
func CompileCase(n int) ([]byte, error) {
	ps := make([]policySpec, 0, n)
	for i := range n {
		p := template(i%len(templates)).forKind(kinds[(i/len(templates))%len(kinds)], fmt.Sprintf("-%d", i))
		ps = append(ps, p)
	}
	return buildCase(ps, smallDeployment(), nil, nil)
}

// workloadKind is a resource whose objects carry a pod spec, and the CEL
// path of that pod spec.
type workloadKind struct {
	group, resource, spec string
}

// kinds are the workload resources; the request is always a Deployment,
// kinds[0].
var kinds = [...]workloadKind{
	{"apps", "deployments", "object.spec.template.spec"},
	{"apps", "statefulsets", "object.spec.template.spec"},
	{"apps", "daemonsets", "object.spec.template.spec"},
	{"apps", "replicasets", "object.spec.template.spec"},
	{"batch", "jobs", "object.spec.template.spec"},
	{"batch", "cronjobs", "object.spec.jobTemplate.spec.template.spec"},
	{"", "pods", "object.spec"},
	{"", "pods/ephemeralcontainers", "object.spec"},
	{"", "replicationcontrollers", "object.spec.template.spec"},
	{"", "podtemplates", "object.template.spec"},
}

// policyTemplate is a realistic policy; SPEC in its expressions stands for
// the pod spec path of the kind it is applied to.
type policyTemplate struct {
	name            string
	params          string // ConfigMap name read through paramRef; "" for none
	matchConditions []admissionregistrationv1.MatchCondition
	validations     []admissionregistrationv1.Validation
	audits          []admissionregistrationv1.AuditAnnotation
}

var templates = [...]policyTemplate{
	{name: "images", validations: []admissionregistrationv1.Validation{
		{Expression: "SPEC.containers.all(c, c.image.startsWith('registry.example.com/'))", Message: "images must come from registry.example.com"},
		{Expression: "SPEC.containers.all(c, c.image.contains(':') && !c.image.endsWith(':latest'))", MessageExpression: "'images of ' + object.metadata.name + ' must have a pinned tag'"},
		{Expression: "!has(SPEC.initContainers) || SPEC.initContainers.all(c, c.image.startsWith('registry.example.com/'))", Message: "init container images must come from registry.example.com"},
	}},
	{name: "labels", validations: []admissionregistrationv1.Validation{
		{Expression: "has(object.metadata.labels) && ['app', 'team', 'env'].all(k, k in object.metadata.labels)", Message: "app, team and env labels are required"},
		{Expression: "object.metadata.labels.env in ['dev', 'staging', 'prod']", MessageExpression: "'unknown env ' + object.metadata.labels.env"},
		{Expression: "object.metadata.labels.team.matches('^[a-z][a-z0-9-]*$')", Message: "team must be a DNS label"},
	}},
	{name: "limits", validations: []admissionregistrationv1.Validation{
		{Expression: "SPEC.containers.all(c, has(c.resources) && has(c.resources.limits) && 'cpu' in c.resources.limits && 'memory' in c.resources.limits)", Message: "every container needs cpu and memory limits"},
		{Expression: "SPEC.containers.all(c, !has(c.resources.limits) || !('memory' in c.resources.limits) || quantity(c.resources.limits.memory).compareTo(quantity('8Gi')) <= 0)", Message: "memory limits above 8Gi need an exception"},
	}},
	{name: "host-namespaces", validations: []admissionregistrationv1.Validation{
		{Expression: "!has(SPEC.hostNetwork) || !SPEC.hostNetwork", Message: "hostNetwork is not allowed"},
		{Expression: "!has(SPEC.hostPID) || !SPEC.hostPID", Message: "hostPID is not allowed"},
		{Expression: "!has(SPEC.hostIPC) || !SPEC.hostIPC", Message: "hostIPC is not allowed"},
	}},
	{name: "privilege", validations: []admissionregistrationv1.Validation{
		{Expression: "SPEC.containers.all(c, !has(c.securityContext) || !has(c.securityContext.privileged) || !c.securityContext.privileged)", Message: "privileged containers are not allowed"},
		{Expression: "SPEC.containers.all(c, has(c.securityContext) && has(c.securityContext.allowPrivilegeEscalation) && !c.securityContext.allowPrivilegeEscalation)", Message: "allowPrivilegeEscalation must be false"},
	}},
	{name: "non-root", validations: []admissionregistrationv1.Validation{
		{Expression: "(has(SPEC.securityContext) && has(SPEC.securityContext.runAsNonRoot) && SPEC.securityContext.runAsNonRoot) || SPEC.containers.all(c, has(c.securityContext) && has(c.securityContext.runAsNonRoot) && c.securityContext.runAsNonRoot)", Message: "containers must run as non-root"},
	}},
	{name: "probes", validations: []admissionregistrationv1.Validation{
		{Expression: "SPEC.containers.all(c, has(c.readinessProbe))", Message: "every container needs a readinessProbe"},
		{Expression: "SPEC.containers.all(c, has(c.livenessProbe))", Message: "every container needs a livenessProbe"},
	}},
	{name: "replica-limit", params: "replica-limit", validations: []admissionregistrationv1.Validation{
		{Expression: "!has(object.spec.replicas) || object.spec.replicas <= int(params.data.maxReplicas)", MessageExpression: "'at most ' + params.data.maxReplicas + ' replicas'"},
	}},
	{name: "registries", params: "registries", validations: []admissionregistrationv1.Validation{
		{Expression: "SPEC.containers.all(c, params.data.registries.split(',').exists(r, c.image.startsWith(r)))", Message: "image registry is not allowed"},
	}},
	{name: "team-ownership",
		matchConditions: []admissionregistrationv1.MatchCondition{
			{Name: "not-controllers", Expression: "!request.userInfo.username.startsWith('system:serviceaccount:kube-system:')"},
			{Name: "not-system-namespaces", Expression: "!(object.metadata.namespace in ['kube-system', 'kube-public'])"},
		},
		validations: []admissionregistrationv1.Validation{
			{Expression: "object.metadata.labels.team in ['payments', 'search', 'web', 'platform']", MessageExpression: "'team ' + object.metadata.labels.team + ' is not registered'"},
		},
		audits: []admissionregistrationv1.AuditAnnotation{{Key: "team", ValueExpression: "string(object.metadata.labels.team)"}},
	},
}

func template(i int) policyTemplate { return templates[i] }

// policySpec is one policy and its binding, or its bindings when binding
// is nil.
type policySpec struct {
	policy   *admissionregistrationv1.ValidatingAdmissionPolicy
	binding  *admissionregistrationv1.ValidatingAdmissionPolicyBinding
	bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
}

// forKind applies t to kind k; suffix makes the name unique.
func (t policyTemplate) forKind(k workloadKind, suffix string) policySpec {
	short := strings.ReplaceAll(k.resource, "/", "-")
	name := t.name + "-" + short + suffix
	resources := []string{k.resource}
	versions := []string{"v1"}
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{k.group}, APIVersions: versions, Resources: resources},
				}}},
			},
			MatchConditions:  t.matchConditions,
			AuditAnnotations: t.audits,
		},
	}
	for _, v := range t.validations {
		v.Expression = strings.ReplaceAll(v.Expression, "SPEC", k.spec)
		p.Spec.Validations = append(p.Spec.Validations, v)
	}
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name + "-binding"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	if t.params != "" {
		p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
		b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Name: t.params, Namespace: paramNamespace}
	}
	return policySpec{policy: p, binding: b}
}

// matrix applies every template to the first n kinds.
func matrix(n int) []policySpec {
	var out []policySpec
	for _, k := range kinds[:n] {
		for i := range templates {
			out = append(out, templates[i].forKind(k, ""))
		}
	}
	return out
}

// tenThousand is the images policy for Deployments and 9,999 policies for
// the other kinds.
func tenThousand() []policySpec {
	out := []policySpec{templates[0].forKind(kinds[0], "")}
	for i := 0; len(out) < 10000; i++ {
		k := kinds[1+i%(len(kinds)-1)]
		out = append(out, templates[(i/(len(kinds)-1))%len(templates)].forKind(k, fmt.Sprintf("-%d", i)))
	}
	return out
}

// selectorPolicy is a policy whose binding selects its params by label.
func selectorPolicy() policySpec {
	t := policyTemplate{name: "team-limits", params: "unused", validations: []admissionregistrationv1.Validation{
		{Expression: "!has(object.spec.replicas) || object.spec.replicas <= int(params.data.maxReplicas)", MessageExpression: "'at most ' + params.data.maxReplicas + ' replicas for ' + params.metadata.name"},
		{Expression: "object.spec.template.spec.containers.all(c, c.image.startsWith(params.data.registry))", Message: "image registry is not allowed"},
		{Expression: "!(object.metadata.labels.team in params.data.deniedTeams.split(','))", Message: "team is not allowed"},
	}}
	s := t.forKind(kinds[0], "")
	s.binding.Spec.ParamRef = &admissionregistrationv1.ParamRef{
		Namespace: paramNamespace,
		Selector:  &metav1.LabelSelector{MatchLabels: map[string]string{"policy.example.com/limits": "true"}},
	}
	return s
}

// selectorParams are 20 ConfigMaps the selector lists and 10 it does not.
func selectorParams() []runtime.Object {
	var out []runtime.Object
	for i := range 30 {
		labels := map[string]string{"policy.example.com/limits": "true", "index": fmt.Sprint(i)}
		if i >= 20 {
			labels["policy.example.com/limits"] = "false"
		}
		out = append(out, &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("limits-%02d", i), Namespace: paramNamespace, Labels: labels},
			Data: map[string]string{
				"maxReplicas": fmt.Sprint(10 + i),
				"registry":    "registry.example.com/",
				"deniedTeams": fmt.Sprintf("legacy-%d,sandbox", i),
			},
		})
	}
	return out
}

// immutableSelector is an UPDATE-only policy comparing object with oldObject.
func immutableSelector() policySpec {
	t := policyTemplate{name: "immutable-selector", validations: []admissionregistrationv1.Validation{
		{Expression: "oldObject == null || object.spec.selector == oldObject.spec.selector", Message: "spec.selector is immutable"},
		{Expression: "oldObject == null || object.spec.template.spec.containers.map(c, c.name) == oldObject.spec.template.spec.containers.map(c, c.name)", Message: "containers may not be renamed"},
	}}
	s := t.forKind(kinds[0], "")
	s.policy.Spec.MatchConstraints.ResourceRules[0].Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Update}
	return s
}

// container returns a compliant container; probe says whether it has a
// readinessProbe.
func container(name, image string, probe bool) corev1.Container {
	c := corev1.Container{
		Name:  name,
		Image: image,
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
		Env:   []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}},
		Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		},
		LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 10},
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptrTo(false),
			RunAsNonRoot:             ptrTo(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
		TerminationMessagePath:   "/dev/termination-log",
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		ImagePullPolicy:          corev1.PullIfNotPresent,
	}
	if probe {
		c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 5}
	}
	return c
}

// deployment returns a defaulted Deployment in the request namespace.
func deployment(replicas int32, containers []corev1.Container) *appsv1.Deployment {
	labels := map[string]string{"app": requestName, "team": "web", "env": "prod"}
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: requestName, Namespace: requestNamespace, Labels: labels,
			Annotations: map[string]string{"owner": "web-team@example.com"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptrTo(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": requestName}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers:                    containers,
					RestartPolicy:                 corev1.RestartPolicyAlways,
					TerminationGracePeriodSeconds: ptrTo(int64(30)),
					DNSPolicy:                     corev1.DNSClusterFirst,
					SecurityContext:               &corev1.PodSecurityContext{RunAsNonRoot: ptrTo(true)},
					SchedulerName:                 "default-scheduler",
				},
			},
			Strategy:             appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType},
			RevisionHistoryLimit: ptrTo(int32(10)),
		},
	}
}

// smallDeployment has two containers; the sidecar has no readinessProbe.
func smallDeployment() *appsv1.Deployment {
	return deployment(3, []corev1.Container{
		container("web", "registry.example.com/web:1.4.2", true),
		container("sidecar", "registry.example.com/envoy:1.30.1", false),
	})
}

// largeDeployment has 50 compliant containers.
func largeDeployment(replicas int32, tag string) *appsv1.Deployment {
	cs := make([]corev1.Container, 50)
	for i := range cs {
		cs[i] = container(fmt.Sprintf("c%02d", i), fmt.Sprintf("registry.example.com/app-%02d:%s", i, tag), true)
	}
	return deployment(replicas, cs)
}

// buildCase writes the case: policies and bindings, the namespaces, the
// params (the two named ConfigMaps plus extra), and the AdmissionReview.
// oldObj makes the request an UPDATE.
func buildCase(ps []policySpec, obj, oldObj *appsv1.Deployment, extra []runtime.Object) ([]byte, error) {
	var nss []*corev1.Namespace
	for _, ns := range []string{requestNamespace, paramNamespace} {
		nss = append(nss, &corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"kubernetes.io/metadata.name": ns, "env": "prod"}},
		})
	}
	params := []runtime.Object{
		&corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "replica-limit", Namespace: paramNamespace},
			Data:       map[string]string{"maxReplicas": "10"},
		},
		&corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "registries", Namespace: paramNamespace},
			Data:       map[string]string{"registries": "quay.example.com/,registry.example.com/"},
		},
	}
	return writeCase(ps, nss, obj, oldObj, append(params, extra...))
}

// writeCase writes the case: policies and bindings, the namespaces, the
// params and the AdmissionReview for obj in its namespace. oldObj makes the
// request an UPDATE.
func writeCase(ps []policySpec, nss []*corev1.Namespace, obj, oldObj *appsv1.Deployment, params []runtime.Object) ([]byte, error) {
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
	for _, p := range ps {
		if err := add(p.policy); err != nil {
			return nil, err
		}
		bs := p.bindings
		if p.binding != nil {
			bs = append(bs, p.binding)
		}
		for _, b := range bs {
			if err := add(b); err != nil {
				return nil, err
			}
		}
	}
	for _, ns := range nss {
		if err := add(ns); err != nil {
			return nil, err
		}
	}
	for _, p := range params {
		if err := add(p); err != nil {
			return nil, err
		}
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	req := &admissionv1.AdmissionRequest{
		UID:       k8stypes.UID("00000000-0000-0000-0000-0000000000b1"),
		Kind:      metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Resource:  metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Name:      obj.Name,
		Namespace: obj.Namespace,
		Operation: admissionv1.Create,
		UserInfo:  authenticationv1.UserInfo{Username: "alice", Groups: []string{"web-team", "system:authenticated"}},
		Object:    runtime.RawExtension{Raw: raw},
	}
	if oldObj != nil {
		oldRaw, err := json.Marshal(oldObj)
		if err != nil {
			return nil, err
		}
		req.Operation = admissionv1.Update
		req.OldObject = runtime.RawExtension{Raw: oldRaw}
	}
	review := &admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  req,
	}
	if err := add(review); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func ptrTo[T any](v T) *T { return &v }
