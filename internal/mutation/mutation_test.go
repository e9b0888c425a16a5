package mutation_test

import (
	"errors"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/internal/mutation"
	"github.com/vapkit/vapkit/internal/patchtypes"
	"sigs.k8s.io/yaml"
)

var deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}

// deployment is the live object of the tests: one container with a port and
// an env var, labels, a selector.
const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
  labels: {app: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  strategy: {type: RollingUpdate}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
        ports: [{containerPort: 80, protocol: TCP}]
        env: [{name: A, value: a}]
`

// typedDeployment decodes the test Deployment into its Go type.
func typedDeployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := yaml.UnmarshalStrict([]byte(deployment), d); err != nil {
		t.Fatal(err)
	}
	return d
}

// evalMutation compiles and evaluates a mutation expression with `object`
// bound to obj's unstructured form.
func evalMutation(t *testing.T, expr string, want *cel.Type, obj runtime.Object) ref.Val {
	t.Helper()
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := env.NewScope(celenv.ScopeOptions{})
	p := s.Compile(expr, celenv.Decls{Authorizer: true, PatchTypes: true}, want)
	if p.Err() != nil {
		t.Fatalf("Compile(%q): %v", expr, p.Err().Detail)
	}
	u, err := builtin.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch(t.Context(), nil, &celenv.Input{Object: u}, runtimeBudget)
	r, err := b.Eval(p)
	if err != nil || r.Err != nil {
		t.Fatalf("Eval(%q): %v %v", expr, err, r.Err)
	}
	return r.Value
}

// toMap returns the unstructured form of obj.
func toMap(t *testing.T, obj runtime.Object) map[string]any {
	t.Helper()
	m, err := builtin.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// jsonPatchCases hold upstream's recorded results: the expectations of
// k8s.io/apiserver v0.37.2 mutating/patch/json_patch_test.go TestJSONPatch and
// the [V] statements of the mutating spec (run against upstream).
var jsonPatchCases = []struct {
	name, expr string
	// edit changes the live Deployment into the expected result; nil
	// expects it unchanged.
	edit func(d *appsv1.Deployment)
	// err is the whole expected error; status the expected HTTP code when
	// it is an API status error.
	err    string
	status int32
}{
	{name: "false test drops the whole patch",
		expr: `[JSONPatch{op: "replace", path: "/spec/replicas", value: 5}, JSONPatch{op: "test", path: "/spec/replicas", value: 2}]`},
	{name: "true test keeps the patch",
		expr: `[JSONPatch{op: "test", path: "/spec/replicas", value: 1}, JSONPatch{op: "replace", path: "/spec/replicas", value: 5}]`,
		edit: func(d *appsv1.Deployment) { d.Spec.Replicas = ptr(int32(5)) }},
	{name: "test of a missing key with a value is a no-op",
		expr: `[JSONPatch{op: "test", path: "/spec/paused", value: true}, JSONPatch{op: "replace", path: "/spec/replicas", value: 5}]`},
	{name: "remove a map entry",
		expr: `[JSONPatch{op: "remove", path: "/metadata/labels/app"}]`,
		edit: func(d *appsv1.Deployment) { d.Labels = map[string]string{} }},
	{name: "remove a missing key",
		expr: `[JSONPatch{op: "remove", path: "/spec/nothere"}]`,
		err:  "JSON Patch: error in remove for path: '/spec/nothere': Unable to remove nonexistent key: nothere: missing value"},
	{name: "add below a missing parent",
		expr: `[JSONPatch{op: "add", path: "/spec/x/y", value: 1}]`,
		err:  `JSON Patch: add operation does not apply: doc is missing path: "/spec/x/y": missing value`},
	{name: "replace the end of a list",
		expr: `[JSONPatch{op: "replace", path: "/spec/template/spec/containers/-", value: {}}]`,
		err:  "JSON Patch: replace operation does not apply: doc is missing key: /spec/template/spec/containers/-: missing value"},
	{name: "unknown op",
		expr: `[JSONPatch{op: "bogus", path: "/spec/replicas", value: 1}]`,
		err:  "JSON Patch: Unexpected kind: bogus"},
	{name: "replace of an unset field adds it",
		expr: `[JSONPatch{op: "replace", path: "/spec/paused", value: true}]`,
		edit: func(d *appsv1.Deployment) { d.Spec.Paused = true }},
	{name: "unknown field is a strict decoding error",
		expr:   `[JSONPatch{op: "replace", path: "/spec/paused2", value: true}]`,
		err:    `Internal error occurred: strict decoding error: unknown field "spec.paused2"`,
		status: 500},
	{name: "wrong JSON type is a decoding error",
		expr:   `[JSONPatch{op: "replace", path: "/spec/replicas", value: "3"}]`,
		err:    `Internal error occurred: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32`,
		status: 500},
	{name: "integers beyond 2^53 become strings",
		expr:   `[JSONPatch{op: "add", path: "/spec/minReadySeconds", value: 9007199254740993}]`,
		err:    `Internal error occurred: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.minReadySeconds of type int32`,
		status: 500},
	{name: "integral double",
		expr: `[JSONPatch{op: "replace", path: "/spec/replicas", value: 3.0}]`,
		edit: func(d *appsv1.Deployment) { d.Spec.Replicas = ptr(int32(3)) }},
	{name: "quantity has no JSON form",
		expr: `[JSONPatch{op: "add", path: "/metadata/labels/q", value: quantity("1Gi")}]`,
		err:  "JSONPath valueExpression evaluated to a type that could not marshal to JSON: type conversion error from 'Quantity' to '*structpb.Value'"},
	{name: "bytes become base64",
		expr: `[JSONPatch{op: "add", path: "/metadata/annotations", value: {"b": b"ab"}}]`,
		edit: func(d *appsv1.Deployment) { d.Annotations = map[string]string{"b": "YWI="} }},
	{name: "timestamps become RFC 3339",
		expr: `[JSONPatch{op: "add", path: "/metadata/annotations", value: {"t": timestamp("2024-01-01T00:00:00Z")}}]`,
		edit: func(d *appsv1.Deployment) { d.Annotations = map[string]string{"t": "2024-01-01T00:00:00Z"} }},
	{name: "escaped key",
		expr: `[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("example.com/x~y"), value: "v"}]`,
		edit: func(d *appsv1.Deployment) { d.Labels["example.com/x~y"] = "v" }},
	{name: "negative index",
		expr: `[JSONPatch{op: "replace", path: "/spec/template/spec/containers/-1/image", value: "nginx:2"}]`,
		edit: func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:2" }},
	{name: "append an Object to a list",
		expr: `[JSONPatch{op: "add", path: "/spec/template/spec/containers/-", value: Object.spec.template.spec.containers{name: "x", image: "y", ports: [Object.spec.template.spec.containers.ports{containerPort: 8080}]}}]`,
		edit: func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1Container("x", "y", 8080))
		}},
	{name: "Object root names are not compared with the path",
		expr: `[JSONPatch{op: "add", path: "/spec/template/spec/containers/-", value: Object.invalid{name: "x", image: "y"}}]`,
		edit: func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1Container("x", "y", 0))
		}},
	{name: "nested Object names are",
		expr: `[JSONPatch{op: "add", path: "/spec/template/spec/containers/-", value: Object.spec.template.spec.containers{name: "x", ports: [Object.spec.template.spec.containers.portsZ{containerPort: 8080}]}}]`,
		err:  `type mismatch: unexpected type name "Object.spec.template.spec.containers.portsZ", expected "Object.spec.template.spec.containers.ports", which matches field name path from root Object type`},
	{name: "unknown field of an Object value",
		expr:   `[JSONPatch{op: "add", path: "/spec/template/spec/containers/-", value: Object.spec.template.spec.containers{name: "x", ports: [Object.spec.template.spec.containers.ports{containerPortZ: 8080}]}}]`,
		err:    `Internal error occurred: strict decoding error: unknown field "spec.template.spec.containers[1].ports[0].containerPortZ"`,
		status: 500},
	{name: "list concatenation with the live object",
		expr: `[JSONPatch{op: "replace", path: "/spec/template/spec/containers/0/env", value: object.spec.template.spec.containers[0].env + [Object.spec.template.spec.containers.env{name: "B", value: "b"}]}]`,
		edit: func(d *appsv1.Deployment) {
			c := &d.Spec.Template.Spec.Containers[0]
			c.Env = append(c.Env, envVar("B", "b"))
		}},
}

func TestJSONPatch(t *testing.T) {
	for _, tc := range jsonPatchCases {
		t.Run(tc.name, func(t *testing.T) {
			live := typedDeployment(t)
			v := evalMutation(t, tc.expr, patchtypes.JSONPatchListType, live)
			got, err := func() (runtime.Object, error) {
				p, err := mutation.BuildJSONPatch(v)
				if err != nil {
					return nil, err
				}
				return mutation.ApplyJSONPatch(p, live, deploymentGVK)
			}()
			checkResult(t, got, err, tc.err, tc.status, tc.edit)
			if diff := cmp.Diff(typedDeployment(t), live); diff != "" {
				t.Errorf("the live object changed (-before +after):\n%s", diff)
			}
		})
	}
}

// checkResult compares a mutation's outcome with the expectation.
func checkResult(t *testing.T, got runtime.Object, err error, wantErr string, status int32, edit func(*appsv1.Deployment)) {
	t.Helper()
	if wantErr != "" {
		if err == nil || err.Error() != wantErr {
			t.Fatalf("error = %v, want %s", err, wantErr)
		}
		var se *apierrors.StatusError
		if isStatus := errors.As(err, &se); isStatus != (status != 0) || (isStatus && se.Status().Code != status) {
			t.Errorf("error %T is a status error %v, want status %d", err, isStatus, status)
		}
		return
	}
	if err != nil {
		t.Fatalf("error = %v", err)
	}
	want := typedDeployment(t)
	if edit != nil {
		edit(want)
	}
	if diff := cmp.Diff(toMap(t, want), toMap(t, got)); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

// applyCases hold upstream's recorded results for apply configurations: the
// expectations of mutating/patch/smd_test.go TestApplyConfiguration and the
// [V] statements of the mutating spec.
var applyCases = []struct {
	name, expr string
	edit       func(d *appsv1.Deployment)
	err        string
}{
	{name: "merge a label",
		expr: `Object{metadata: Object.metadata{labels: {"tier": "frontend"}}}`,
		edit: func(d *appsv1.Deployment) { d.Labels["tier"] = "frontend" }},
	{name: "same value is a no-op",
		expr: `Object{metadata: Object.metadata{labels: {"app": "web"}}}`},
	{name: "apiVersion and kind are ignored",
		expr: `Object{apiVersion: "v9", kind: "Nope", spec: Object.spec{replicas: 3}}`,
		edit: func(d *appsv1.Deployment) { d.Spec.Replicas = ptr(int32(3)) }},
	{name: "update a listType=map entry",
		expr: `Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: "nginx", image: "nginx:2"}]}}}}`,
		edit: func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:2" }},
	{name: "add a listType=map entry",
		expr: `Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: "x", image: "y"}]}}}}`,
		edit: func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1Container("x", "y", 0))
		}},
	{name: "keyed by a defaulted key",
		expr: `Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: "nginx", ports: [Object.spec.template.spec.containers.ports{containerPort: 80, name: "http"}]}]}}}}`,
		edit: func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Ports[0].Name = "http" }},
	{name: "add an env var",
		expr: `Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: "nginx", env: [Object.spec.template.spec.containers.env{name: "B", value: "b"}]}]}}}}`,
		edit: func(d *appsv1.Deployment) {
			c := &d.Spec.Template.Spec.Containers[0]
			c.Env = append(c.Env, envVar("B", "b"))
		}},
	{name: "unknown field",
		expr: `Object{spec: Object.spec{replicasx: 3}}`,
		err:  "error applying patch: failed to convert patch object to typed object: .spec.replicasx: field not declared in schema"},
	{name: "atomic struct",
		expr: `Object{spec: Object.spec{selector: Object.spec.selector{matchLabels: {"app": "web"}}}}`,
		err:  "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector"},
	{name: "two atomics",
		expr: `Object{spec: Object.spec{selector: Object.spec.selector{matchLabels: {"app": "web"}}, template: Object.spec.template{spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: "nginx", args: ["a"]}]}}}}`,
		err:  "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector, .spec.template.spec.containers[0].args"},
	{name: "null is a value structured-merge-diff rejects",
		expr: `Object{metadata: Object.metadata{labels: null}}`,
		err:  "error applying patch: failed to convert patch object to typed object: .metadata.labels: expected map, got &{NULL_VALUE}"},
	{name: "non-string key inside a nested Object",
		expr: `Object{metadata: Object.metadata{labels: {1: "a"}}}`,
		err:  `error applying patch: failed to convert patch object to typed object: .metadata: expected map, got &{fail to convert field "labels": map key '\x01' is of type types.Int, not string}`},
	{name: "wrong scalar type",
		expr: `Object{spec: Object.spec{replicas: "3"}}`,
		err:  `error applying patch: failed to convert patch object to typed object: .spec.replicas: expected numeric (int or float), got string`},
	{name: "type name mismatch",
		expr: `Object{spec: Object.specx{replicas: 3}}`,
		err:  `type mismatch: unexpected type name "Object.specx", expected "Object.spec", which matches field name path from root Object type`},
	{name: "duplicate keys in the patch",
		expr: `Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: "a"}, Object.spec.template.spec.containers{name: "a"}]}}}}`,
		err:  `error applying patch: failed to convert patch object to typed object: .spec.template.spec.containers: duplicate entries for key [name="a"]`},
}

func TestApply(t *testing.T) {
	tc0, err := mutation.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range applyCases {
		t.Run(tc.name, func(t *testing.T) {
			live := typedDeployment(t)
			v := evalMutation(t, tc.expr, patchtypes.ObjectType, live)
			got, err := mutation.Apply(tc0, live, v.(*patchtypes.ObjectVal))
			var obj runtime.Object
			if got != nil {
				obj = got
			}
			checkResult(t, obj, err, tc.err, 0, tc.edit)
		})
	}
}

func TestApplyUnknownKind(t *testing.T) {
	tc0, err := mutation.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Foo"}}
	v := evalMutation(t, `Object{spec: Object.spec{a: 1}}`, patchtypes.ObjectType, live)
	_, err = mutation.Apply(tc0, live, v.(*patchtypes.ObjectVal))
	const want = "error applying patch: failed to convert patch object to typed object: no corresponding type for apps/v1, Kind=Foo"
	if err == nil || err.Error() != want {
		t.Fatalf("Apply() error = %v, want %s", err, want)
	}
}

func ptr[T any](v T) *T { return &v }

func corev1Container(name, image string, port int32) corev1.Container {
	c := corev1.Container{Name: name, Image: image}
	if port != 0 {
		c.Ports = []corev1.ContainerPort{{ContainerPort: port}}
	}
	return c
}

func envVar(name, value string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: value} }
