package policy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/policy"
)

// mutatingPolicy builds a MAP matching Deployment CREATE and UPDATE, with
// one binding named <name>-b.
func mutatingPolicy(t testing.TB, name, fp, reinvocation string, mutations ...string) (*admissionregistrationv1.MutatingAdmissionPolicy, *admissionregistrationv1.MutatingAdmissionPolicyBinding) {
	t.Helper()
	y := `
metadata: {name: ` + name + `}
spec:
  failurePolicy: ` + fp + `
  reinvocationPolicy: ` + reinvocation + `
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps", "example.com"], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["deployments", "widgets"]}
  mutations:
`
	for _, m := range mutations {
		kind, expr, _ := strings.Cut(m, ":")
		if kind == "json" {
			y += "  - patchType: JSONPatch\n    jsonPatch: {expression: " + strconvQuote(expr) + "}\n"
		} else {
			y += "  - patchType: ApplyConfiguration\n    applyConfiguration: {expression: " + strconvQuote(expr) + "}\n"
		}
	}
	p := &admissionregistrationv1.MutatingAdmissionPolicy{}
	if err := yaml.UnmarshalStrict([]byte(y), p); err != nil {
		t.Fatal(err)
	}
	b := &admissionregistrationv1.MutatingAdmissionPolicyBinding{}
	b.Name, b.Spec.PolicyName = name+"-b", name
	return p, b
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// typedDeploymentRequest is a CREATE of a typed Deployment in no namespace
// (cluster-scoped matching keeps the tests free of namespace lookups),
// defaulted as the API server holds it after decoding, so that a patch
// shows only what the mutations changed.
func typedDeploymentRequest(op admissionv1.Operation) *policy.Request {
	d := &appsv1.Deployment{}
	d.APIVersion, d.Kind = "apps/v1", "Deployment"
	d.Name = "web"
	d.Labels = map[string]string{"app": "web"}
	r := int32(1)
	d.Spec.Replicas = &r
	builtin.Scheme().Default(d)
	req := &policy.Request{
		Operation: op,
		Kind:      schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Resource:  schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Name:      "web",
		Object:    d,
	}
	if op == admissionv1.Delete {
		req.Object, req.OldObject = nil, d
	}
	return req
}

// unstructuredDeploymentRequest is typedDeploymentRequest's CREATE with the
// Deployment unstructured, as policy.NewRequest keeps an unstructured
// manifest.
func unstructuredDeploymentRequest() *policy.Request {
	req := typedDeploymentRequest(admissionv1.Create)
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(req.Object)
	if err != nil {
		panic(err)
	}
	req.Object = &unstructured.Unstructured{Object: m}
	return req
}

type mutCase struct {
	name     string
	policies [][]string // name, failurePolicy, reinvocationPolicy, mutations...
	req      func() *policy.Request
	// labels expected on Decision.Object (nil: Object must be nil).
	labels map[string]string
	// status expectations when denied.
	code    int32
	reason  string
	message string
	patch   string
	// reinvoked: invocations traced in the reinvocation pass.
	reinvoked []string
}

func TestMutatingPolicies(t *testing.T) {
	label := func(k, v string) string {
		return `apply:Object{metadata: Object.metadata{labels: {"` + k + `": "` + v + `"}}}`
	}
	tests := []mutCase{
		{name: "apply configuration adds a label",
			policies: [][]string{{"add", "Fail", "Never", label("team", "a")}},
			labels:   map[string]string{"app": "web", "team": "a"},
			patch:    `[{"op":"add","path":"/metadata/labels/team","value":"a"}]`},
		{name: "json patch then apply configuration, in order",
			policies: [][]string{{"both", "Fail", "Never", `json:[JSONPatch{op: "add", path: "/metadata/labels/a", value: "1"}]`, `apply:Object{metadata: Object.metadata{labels: {"b": object.metadata.labels["a"] + "2"}}}`}},
			labels:   map[string]string{"app": "web", "a": "1", "b": "12"}},
		{name: "compile error denies under Fail with reason Invalid",
			policies: [][]string{{"bad", "Fail", "Never", `json:[JSONPatch{op: "add", path: "/x", value: nope}]`}},
			code:     403, reason: "Invalid",
			message: "policy 'bad' with binding 'bad-b' denied request: compilation failed: ERROR: <input>:1:42: undeclared reference to 'nope' (in container '')\n | [JSONPatch{op: \"add\", path: \"/x\", value: nope}]\n | .........................................^"},
		{name: "Ignore drops the error and keeps the other mutations",
			policies: [][]string{{"half", "Ignore", "Never", `json:[JSONPatch{op: "remove", path: "/spec/nothere"}]`, label("kept", "yes")}},
			labels:   map[string]string{"app": "web", "kept": "yes"}},
		{name: "strict decoding error aborts even under Ignore",
			policies: [][]string{{"strict", "Ignore", "Never", `json:[JSONPatch{op: "replace", path: "/spec/paused2", value: true}]`}},
			code:     500, reason: "InternalError",
			message: `Internal error occurred: strict decoding error: unknown field "spec.paused2"`},
		{name: "an unstructured Deployment is patched as the typed object the server holds",
			policies: [][]string{{"strict", "Ignore", "Never", `json:[JSONPatch{op: "replace", path: "/spec/paused2", value: true}]`}},
			req:      unstructuredDeploymentRequest,
			code:     500, reason: "InternalError",
			message: `Internal error occurred: strict decoding error: unknown field "spec.paused2"`},
		{name: "a wrong type in a patched unstructured Deployment is the server's 500",
			policies: [][]string{{"wrong", "Fail", "Never", `json:[JSONPatch{op: "replace", path: "/spec/replicas", value: "three"}]`}},
			req:      unstructuredDeploymentRequest,
			code:     500, reason: "InternalError",
			message: `Internal error occurred: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32`},
		{name: "a patch that panics the API server is a 500",
			policies: [][]string{{"panics", "Ignore", "Never", `json:[JSONPatch{op: "test", path: ""}]`}},
			code:     500, reason: "InternalError",
			message: "This request caused apiserver to panic. Look in the logs for details."},
		{name: "atomic field",
			policies: [][]string{{"atomic", "Fail", "Never", `apply:Object{spec: Object.spec{selector: Object.spec.selector{matchLabels: {"a": "b"}}}}`}},
			code:     403, reason: "Invalid",
			message: "policy 'atomic' with binding 'atomic-b' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector"},
		{name: "a later policy's change reinvokes an earlier IfNeeded policy",
			policies: [][]string{
				{"a-copy", "Fail", "IfNeeded", `apply:Object{metadata: Object.metadata{labels: {"copy": "z" in object.metadata.labels ? object.metadata.labels["z"] : "none"}}}`},
				{"b-set", "Fail", "Never", label("z", "1")},
			},
			labels:    map[string]string{"app": "web", "copy": "1", "z": "1"},
			reinvoked: []string{"a-copy"}},
		{name: "DELETE is never mutated",
			policies: [][]string{{"add", "Fail", "Never", label("team", "a")}},
			req:      func() *policy.Request { return typedDeploymentRequest(admissionv1.Delete) }},
		{name: "a kind without schemas is a 503",
			policies: [][]string{{"crd", "Ignore", "Never", label("team", "a")}},
			req: func() *policy.Request {
				return &policy.Request{
					Operation: admissionv1.Create,
					Kind:      schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"},
					Resource:  schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"},
					Name:      "w",
					Object:    &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}}},
				}
			},
			code: 503, reason: "ServiceUnavailable",
			message: "Resource kind example.com/v1, Kind=Widget not found. There can be a delay between when CustomResourceDefinitions are created and when they are available."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts policy.Options
			for _, p := range tc.policies {
				mp, mb := mutatingPolicy(t, p[0], p[1], p[2], p[3:]...)
				opts.MutatingPolicies = append(opts.MutatingPolicies, mp)
				opts.MutatingBindings = append(opts.MutatingBindings, mb)
			}
			ev, err := policy.Compile(nil, nil, opts)
			if err != nil {
				t.Fatal(err)
			}
			req := typedDeploymentRequest(admissionv1.Create)
			if tc.req != nil {
				req = tc.req()
			}
			d, err := ev.Evaluate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range d.Mutations {
				t.Log(tr.String())
			}
			if tc.code != 0 {
				if d.Allowed || d.Status == nil {
					t.Fatalf("Evaluate() allowed, want %d", tc.code)
				}
				got := [3]any{d.Status.Code, string(d.Status.Reason), d.Status.Message}
				if diff := cmp.Diff([3]any{tc.code, tc.reason, tc.message}, got); diff != "" {
					t.Errorf("status (-want +got):\n%s", diff)
				}
				return
			}
			if !d.Allowed {
				t.Fatalf("Evaluate() denied: %v", d.Status.Message)
			}
			if tc.labels == nil {
				if d.Object != nil || d.Patch != nil {
					t.Fatalf("Object = %v, Patch = %s, want none", d.Object, d.Patch)
				}
				return
			}
			got, ok := d.Object.(*appsv1.Deployment)
			if !ok {
				t.Fatalf("Object is %T, want *appsv1.Deployment", d.Object)
			}
			if diff := cmp.Diff(tc.labels, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if tc.patch != "" && string(d.Patch) != tc.patch {
				t.Errorf("Patch = %s, want %s", d.Patch, tc.patch)
			}
			checkPatch(t, req.Object, d)
			var reinvoked []string
			for _, tr := range d.Mutations {
				if tr.Reinvoked && tr.Outcome == policy.Passed {
					reinvoked = append(reinvoked, tr.Policy)
				}
			}
			if diff := cmp.Diff(tc.reinvoked, reinvoked); diff != "" {
				t.Errorf("reinvoked (-want +got):\n%s", diff)
			}
		})
	}
}

// checkPatch applies the decision's patch to the request object's JSON and
// compares with the mutated object's JSON.
func checkPatch(t *testing.T, from runtime.Object, d *policy.Decision) {
	t.Helper()
	resp := d.AdmissionResponse("uid")
	if resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
		t.Fatalf("AdmissionResponse.PatchType = %v, want JSONPatch", resp.PatchType)
	}
	toJSON := func(o runtime.Object) []byte {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	p, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		t.Fatal(err)
	}
	patched, err := p.Apply(toJSON(from))
	if err != nil {
		t.Fatalf("applying %s: %v", resp.Patch, err)
	}
	if !jsonpatch.Equal(patched, toJSON(d.Object)) {
		t.Errorf("patched request object = %s, want %s", patched, toJSON(d.Object))
	}
}
