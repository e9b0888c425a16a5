package policy_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

// testerPolicies limits replicas with a ConfigMap parameter (written
// without a namespace, so it lives in default), warns about Deployments
// without an owner label and records the replica count in the audit log.
const testerPolicies = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["deployments"]}
  validations:
  - expression: "object.spec.replicas <= int(params.data.max)"
    messageExpression: "'at most ' + params.data.max + ' replicas, got ' + string(object.spec.replicas)"
    reason: Forbidden
  - expression: "oldObject == null || object.spec.replicas >= oldObject.spec.replicas"
    message: "scaling down is not allowed"
  auditAnnotations:
  - key: replicas
    valueExpression: "string(object.spec.replicas)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas}
spec:
  policyName: max-replicas
  paramRef: {name: replica-limit, namespace: default, parameterNotFoundAction: Deny}
  validationActions: [Deny]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: replica-limit}
data: {max: "5"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: owner-label}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE", "UPDATE", "DELETE"], resources: ["deployments"]}
  validations:
  - expression: "has((object == null ? oldObject : object).metadata.labels) && 'owner' in (object == null ? oldObject : object).metadata.labels"
    message: "an owner label is required"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: owner-label}
spec:
  policyName: owner-label
  validationActions: [Warn]
`

// testerDeployment returns a typed Deployment; apiVersion and kind may be left
// out, the Tester finds them.
func testerDeployment(namespace, name string, replicas int32, labels map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec:       appsv1.DeploymentSpec{Replicas: &replicas},
	}
}

var testerOwned = map[string]string{"owner": "team-a"}

// Table tests read: load the policies, evaluate this object, expect this
// decision.
func ExampleTester() {
	// In a test file: m, err := manifest.LoadFiles("testdata/policies.yaml")
	m, err := manifest.Load([]byte(testerPolicies), "policies.yaml")
	if err != nil {
		log.Fatal(err)
	}
	tester, err := policy.NewTester(m, policy.Options{})
	if err != nil {
		log.Fatal(err)
	}
	tests := []struct {
		name string
		obj  *appsv1.Deployment
		want policy.Expect
	}{
		{"small", testerDeployment("team-a", "small", 2, testerOwned), policy.Expect{}},
		{"big", testerDeployment("team-a", "big", 9, testerOwned), policy.Expect{Denied: true, Message: "at most 5 replicas, got 9"}},
		{"unowned", testerDeployment("team-a", "unowned", 1, nil), policy.Expect{Warnings: []string{"an owner label is required"}}},
		{"wrong expectation", testerDeployment("team-a", "wrong", 7, testerOwned), policy.Expect{}},
	}
	for _, tc := range tests {
		// In a test: t.Run(tc.name, ...) and t.Error(err).
		err := tester.CheckCreate(context.Background(), tc.obj, tc.want)
		fmt.Printf("%s: %v\n", tc.name, err)
	}
	// Output:
	// small: <nil>
	// big: <nil>
	// unowned: <nil>
	// wrong expectation: CREATE deployments.apps "wrong" in namespace "team-a": denied ("deployments.apps \"wrong\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas' denied request: at most 5 replicas, got 7"), want allowed
}

func newTester(t *testing.T, text string) *policy.Tester {
	t.Helper()
	m, err := manifest.Load([]byte(text), "policies.yaml")
	if err != nil {
		t.Fatalf("Load() error = %v", err)
	}
	tester, err := policy.NewTester(m, policy.Options{})
	if err != nil {
		t.Fatalf("NewTester() error = %v", err)
	}
	return tester
}

func TestTester(t *testing.T) {
	tester := newTester(t, testerPolicies)
	unstructuredDeployment := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "u", "labels": map[string]any{"owner": "x"}},
		"spec":     map[string]any{"replicas": int64(6)},
	}}
	tests := []struct {
		name    string
		op      admissionv1.Operation
		obj     runtime.Object
		old     runtime.Object
		want    policy.Expect
		wantErr string // substring of the error; "" for success
	}{
		{name: "allowed", op: admissionv1.Create, obj: testerDeployment("a", "d", 5, testerOwned),
			want: policy.Expect{AuditAnnotations: map[string]string{"max-replicas/replicas": "5"}}},
		{name: "denied with message and reason", op: admissionv1.Create, obj: testerDeployment("a", "d", 6, testerOwned),
			want: policy.Expect{Denied: true, Message: "at most 5 replicas, got 6", Reason: metav1.StatusReasonForbidden}},
		{name: "denied and warned", op: admissionv1.Create, obj: testerDeployment("a", "d", 6, nil),
			want: policy.Expect{Denied: true, Warnings: []string{"Validation failed for ValidatingAdmissionPolicy 'owner-label' with binding 'owner-label': an owner label is required"}}},
		{name: "update", op: admissionv1.Update, obj: testerDeployment("a", "d", 2, testerOwned), old: testerDeployment("a", "d", 3, testerOwned),
			want: policy.Expect{Denied: true, Message: "scaling down is not allowed", Reason: metav1.StatusReasonInvalid}},
		{name: "delete", op: admissionv1.Delete, old: testerDeployment("a", "d", 3, nil),
			want: policy.Expect{Warnings: []string{"an owner label is required"}}},
		{name: "unstructured in default namespace", op: admissionv1.Create, obj: unstructuredDeployment,
			want: policy.Expect{Denied: true, Message: `deployments.apps "u" is forbidden`}},
		{name: "not matched", op: admissionv1.Create, obj: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "a"}},
			want: policy.Expect{}},

		{name: "want denied", op: admissionv1.Create, obj: testerDeployment("a", "d", 1, testerOwned),
			want: policy.Expect{Denied: true}, wantErr: `CREATE deployments.apps "d" in namespace "a": allowed, want denied`},
		{name: "wrong message and reason", op: admissionv1.Create, obj: testerDeployment("a", "d", 6, testerOwned),
			want:    policy.Expect{Denied: true, Message: "at most 4", Reason: metav1.StatusReasonInvalid},
			wantErr: `message = "deployments.apps \"d\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas' denied request: at most 5 replicas, got 6", want it to contain "at most 4"; reason = Forbidden, want Invalid`},
		{name: "unexpected warning", op: admissionv1.Create, obj: testerDeployment("a", "d", 1, nil),
			want: policy.Expect{}, wantErr: `warnings = ["Validation failed for ValidatingAdmissionPolicy 'owner-label' with binding 'owner-label': an owner label is required"], want 0 matching []`},
		{name: "wrong warning", op: admissionv1.Create, obj: testerDeployment("a", "d", 1, nil),
			want: policy.Expect{Warnings: []string{"owner label is optional"}}, wantErr: `warnings[0] = "Validation failed`},
		{name: "audit annotations", op: admissionv1.Create, obj: testerDeployment("a", "d", 1, testerOwned),
			want:    policy.Expect{AuditAnnotations: map[string]string{"max-replicas/replicas": "2", "other/key": "v"}},
			wantErr: `audit annotation "max-replicas/replicas" = "1", want "2"; audit annotation "other/key" missing, want "v"`},
		{name: "unknown kind", op: admissionv1.Create, obj: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}}},
			wantErr: `no matches for kind "Widget" in version "example.com/v1"`},
		{name: "no object", op: admissionv1.Create, wantErr: "request needs an object or an old object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var err error
			switch tc.op {
			case admissionv1.Create:
				err = tester.CheckCreate(t.Context(), tc.obj, tc.want)
			case admissionv1.Update:
				err = tester.CheckUpdate(t.Context(), tc.obj, tc.old, tc.want)
			case admissionv1.Delete:
				err = tester.CheckDelete(t.Context(), tc.old, tc.want)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Check() error = %v, want nil", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("Check() error = %v, want containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestTesterRequest(t *testing.T) {
	tester := newTester(t, testerPolicies)
	tests := []struct {
		name          string
		op            admissionv1.Operation
		obj, old      runtime.Object
		wantNamespace string
		wantResource  string
		wantOptions   string
	}{
		{"namespaced without namespace", admissionv1.Create, testerDeployment("", "d", 1, nil), nil, "default", "apps/v1, Resource=deployments", "CreateOptions"},
		{"namespaced", admissionv1.Update, testerDeployment("x", "d", 1, nil), testerDeployment("x", "d", 1, nil), "x", "apps/v1, Resource=deployments", "UpdateOptions"},
		{"cluster scoped", admissionv1.Delete, nil, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, "", "/v1, Resource=nodes", "DeleteOptions"},
		{"namespace object", admissionv1.Create, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, nil, "ns", "/v1, Resource=namespaces", "CreateOptions"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := tester.Request(tc.op, tc.obj, tc.old)
			if err != nil {
				t.Fatalf("Request() error = %v", err)
			}
			if req.Namespace != tc.wantNamespace {
				t.Errorf("Namespace = %q, want %q", req.Namespace, tc.wantNamespace)
			}
			if got := req.Resource.String(); got != tc.wantResource {
				t.Errorf("Resource = %q, want %q", got, tc.wantResource)
			}
			if got := req.Options.GetObjectKind().GroupVersionKind().Kind; got != tc.wantOptions {
				t.Errorf("Options kind = %q, want %q", got, tc.wantOptions)
			}
			for _, o := range []runtime.Object{req.Object, req.OldObject} {
				if o == nil {
					continue
				}
				if ns := o.(metav1.Object).GetNamespace(); tc.wantNamespace != "ns" && ns != tc.wantNamespace {
					t.Errorf("object namespace = %q, want %q", ns, tc.wantNamespace)
				}
			}
		})
	}
	// The caller's object is not modified.
	d := testerDeployment("", "d", 1, nil)
	if _, err := tester.Request(admissionv1.Create, d, nil); err != nil {
		t.Fatal(err)
	}
	if d.Namespace != "" || d.Kind != "" {
		t.Errorf("Request() modified its argument: namespace %q, kind %q", d.Namespace, d.Kind)
	}
}

func TestNewTesterErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string
	}{
		{"compile issue", `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: broken}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}
  validations:
  - expression: "object.spec.("
`, `the API server would refuse: ValidatingAdmissionPolicy "broken": spec.validations[0].expression: Invalid value: "object.spec.(": compilation failed: `},
		{"binding without its policy", `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: orphan}
spec:
  policyName: missing
  validationActions: [Deny]
`, `ValidatingAdmissionPolicyBinding "orphan": spec.policyName: Not found: "missing": no such ValidatingAdmissionPolicy is given; the binding would enforce nothing`},
		{"Deny with Warn", `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}
  validations:
  - expression: "true"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: p}
spec:
  policyName: p
  validationActions: [Deny, Warn]
`, `ValidatingAdmissionPolicyBinding "p": spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn`},
		{"function of a later version", `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}
  validations:
  - expression: "object.metadata.name.matches('^a')"
  - expression: "isSemver('1.0.0')"
`, `ValidatingAdmissionPolicy "p": spec.validations[1].expression: Invalid value: "isSemver('1.0.0')": compilation failed: ERROR: <input>:1:9: undeclared reference to 'isSemver'`},
		{"duplicate param", `
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: default}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
`, "params: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := manifest.Load([]byte(tc.text), "policies.yaml")
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			// Kubernetes 1.33 accepts isSemver only in stored expressions:
			// new ones compile as 1.32, which lacks it.
			env, err := celenv.New(celenv.Options{Version: celenv.Version1_33})
			if err != nil {
				t.Fatal(err)
			}
			_, err = policy.NewTester(m, policy.Options{Env: env})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewTester() error = %v, want containing %q", err, tc.want)
			}
		})
	}
	if _, err := policy.NewTester(nil, policy.Options{}); err == nil {
		t.Errorf("NewTester(nil) error = nil, want an error")
	}
}

// TestTesterRefusesWhatStrictDecodingRejects: an unstructured object with
// a misspelt field is refused, as kubectl apply's strict field validation
// refuses it, instead of being judged without the field.
func TestTesterRefusesWhatStrictDecodingRejects(t *testing.T) {
	tester := newTester(t, testerPolicies)
	deployment := func(spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "u", "labels": map[string]any{"owner": "x"}},
			"spec":     spec,
		}}
	}
	tests := []struct {
		name string
		spec map[string]any
		want string
	}{
		{"misspelt field", map[string]any{"replica": int64(3)}, `object Deployment: unknown field "spec.replica"`},
		{"wrong type", map[string]any{"replicas": "3"}, `object Deployment: spec.replicas: expected integer, got string`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tester.CheckCreate(t.Context(), deployment(tc.spec), policy.Expect{})
			if err == nil || err.Error() != tc.want {
				t.Errorf("CheckCreate() error = %v, want %s", err, tc.want)
			}
		})
	}
	if err := tester.CheckCreate(t.Context(), deployment(map[string]any{"replicas": int64(3)}), policy.Expect{}); err != nil {
		t.Errorf("CheckCreate(valid) error = %v", err)
	}
}

// TestTesterMutatingPolicies: NewTester compiles the mutating policies of
// the manifests, and the validating ones see what they made of the object.
func TestTesterMutatingPolicies(t *testing.T) {
	tester := newTester(t, `
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: owner}
spec:
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration: {expression: "Object{metadata: Object.metadata{labels: {'owner': 'platform'}}}"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: owner}
spec: {policyName: owner}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: owned}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  validations:
  - expression: "object.metadata.labels.owner == 'platform'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: owned}
spec: {policyName: owned, validationActions: [Deny]}
`)
	req, err := tester.Request(admissionv1.Create, testerDeployment("a", "d", 1, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := tester.Evaluator().Evaluate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Allowed {
		t.Fatalf("Evaluate() denied: %v", d.Status.Message)
	}
	if got := d.Object.(*appsv1.Deployment).Labels["owner"]; got != "platform" {
		t.Errorf("owner label = %q, want platform", got)
	}
}

// TestTesterRefusesMetadataTheServerRefuses: an object whose metadata the
// API server refuses on create (422, before any policy runs) fails the
// check with the server's message; the same object passes on UPDATE,
// whose metadata rules the Tester does not model.
func TestTesterRefusesMetadataTheServerRefuses(t *testing.T) {
	tester := newTester(t, testerPolicies)
	deployment := func(meta metav1.ObjectMeta) *appsv1.Deployment {
		replicas := int32(2)
		return &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: meta,
			Spec:       appsv1.DeploymentSpec{Replicas: &replicas},
		}
	}
	owner := map[string]string{"owner": "x"}
	tests := []struct {
		name string
		obj  runtime.Object
		want string // "" for no error
	}{
		{"valid", deployment(metav1.ObjectMeta{Name: "web", Labels: owner}), ""},
		{"namespace filled in", deployment(metav1.ObjectMeta{Name: "web", Namespace: "", Labels: owner}), ""},
		{"generated name", deployment(metav1.ObjectMeta{GenerateName: "web-", Labels: owner}), ""},
		{"upper-case name", deployment(metav1.ObjectMeta{Name: "Web", Labels: owner}),
			`object: the API server refuses to create it: Deployment.apps "Web" is invalid: metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"bad label value", deployment(metav1.ObjectMeta{Name: "web", Labels: map[string]string{"owner": "-x"}}),
			`object: the API server refuses to create it: Deployment.apps "web" is invalid: metadata.labels: Invalid value: "-x": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		{"unstructured, no name", &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"labels": map[string]any{"owner": "x"}},
			"spec":     map[string]any{"replicas": int64(2)},
		}}, `object: the API server refuses to create it: Deployment.apps "" is invalid: metadata.name: Required value: name or generateName is required`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tester.CheckCreate(t.Context(), tc.obj, policy.Expect{})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("CheckCreate() error = %q\nwant %q", got, tc.want)
			}
		})
	}
	old := deployment(metav1.ObjectMeta{Name: "Web", Namespace: "default", Labels: owner})
	if err := tester.CheckUpdate(t.Context(), old.DeepCopy(), old, policy.Expect{}); err != nil {
		t.Errorf("CheckUpdate() error = %v, want nil (update metadata is not checked)", err)
	}
}
