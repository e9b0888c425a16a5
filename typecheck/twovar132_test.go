package typecheck_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/typecheck"
)

// TestDriftTwoVarComprehensions132: the 1.32 API server's type checker
// (cel-go v0.22.0) leaves the second variable of a two-variable
// comprehension over a range that is no list or map untyped, here a
// preserve-unknown-fields object (which is no collection), an
// int-or-string (dyn) and an element of a list of such objects. The
// warnings were recorded from validating.TypeChecker of k8s.io/apiserver
// v0.32.13 with the same schema (type names without their wall-clock
// digits). Expressions that only check with the untyped variable get no
// warning: the type checker never converts them to proto form, as the
// compiler does.
func TestDriftTwoVarComprehensions132(t *testing.T) {
	const schemaJSON = `{"type":"object","properties":{
	 "apiVersion":{"type":"string"},"kind":{"type":"string"},
	 "metadata":{"type":"object","properties":{"name":{"type":"string"},"labels":{"type":"object","additionalProperties":{"type":"string"}}}},
	 "data":{"type":"object","additionalProperties":{"type":"string"}},
	 "spec":{"type":"object","properties":{
	   "extra":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
	   "port":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},
	   "items":{"type":"array","items":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}
	 }}}}`
	const policyYAML = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: tc}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["example.com"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["widgets"]}
  variables:
  - name: xs
    expression: "object.spec.extra.transformList(k, v, v)"
  - name: ok
    expression: "object.spec.extra.transformList(k, v, k)"
  validations:
  - expression: "object.spec.extra.all(k, v, v != '')"
  - expression: "object.data.all(k, v, v != '')"
  - expression: "object.metadata.labels.all(k, v, v != '')"
  - expression: "request.object.metadata.labels.all(k, v, v != '')"
  - expression: "object.spec.port.all(k, v, v == 1)"
  - expression: "object.spec.extra.all(k, v, dyn(v) == 1)"
  - expression: "object.spec.items.all(i, v, v.x == 1)"
  - expression: "object.spec.items.all(i, v, v.all(a, b, b.c == 1))"
  - expression: "variables.xs.all(e, e == 1)"
  - expression: "variables.ok.all(e, e == 1)"
  - expression: "object.spec.port.all(k, v, dyn(v) == 1)"
  - expression: "object.spec.extra.all(k, v, v)"
    messageExpression: "object.spec.extra.transformList(k, v, v.x).join(',')"
`
	want := []admissionregistrationv1.ExpressionWarning{
		{FieldRef: "spec.validations[0].expression",
			Warning: "example.com/v1, Kind=Widget: ERROR: <input>:1:12: expression of type 'Widget.spec.extra' cannot be range of a comprehension (must be list, map, or dynamic)\n | object.spec.extra.all(k, v, v != '')\n | ...........^\nERROR: <input>:1:31: found no matching overload for '_!=_' applied to '(, string)'\n | object.spec.extra.all(k, v, v != '')\n | ..............................^\n"},
		{FieldRef: "spec.validations[2].expression",
			Warning: "example.com/v1, Kind=Widget: ERROR: <input>:1:16: undefined field 'labels'\n | object.metadata.labels.all(k, v, v != '')\n | ...............^\nERROR: <input>:1:36: found no matching overload for '_!=_' applied to '(, string)'\n | object.metadata.labels.all(k, v, v != '')\n | ...................................^\n"},
		{FieldRef: "spec.validations[3].expression",
			Warning: "example.com/v1, Kind=Widget: ERROR: <input>:1:8: undefined field 'object'\n | request.object.metadata.labels.all(k, v, v != '')\n | .......^\nERROR: <input>:1:44: found no matching overload for '_!=_' applied to '(, string)'\n | request.object.metadata.labels.all(k, v, v != '')\n | ...........................................^\n"},
		{FieldRef: "spec.validations[4].expression",
			Warning: "example.com/v1, Kind=Widget: ERROR: <input>:1:30: found no matching overload for '_==_' applied to '(, int)'\n | object.spec.port.all(k, v, v == 1)\n | .............................^\n"},
		{FieldRef: "spec.validations[5].expression",
			Warning: "example.com/v1, Kind=Widget: ERROR: <input>:1:12: expression of type 'Widget.spec.extra' cannot be range of a comprehension (must be list, map, or dynamic)\n | object.spec.extra.all(k, v, dyn(v) == 1)\n | ...........^\n"},
		{FieldRef: "spec.validations[6].expression",
			Warning: "example.com/v1, Kind=Widget: ERROR: <input>:1:30: undefined field 'x'\n | object.spec.items.all(i, v, v.x == 1)\n | .............................^\n"},
		{FieldRef: "spec.validations[7].expression",
			Warning: "example.com/v1, Kind=Widget: ERROR: <input>:1:29: expression of type 'Widget.spec.items.@idx' cannot be range of a comprehension (must be list, map, or dynamic)\n | object.spec.items.all(i, v, v.all(a, b, b.c == 1))\n | ............................^\nERROR: <input>:1:42: type '' does not support field selection\n | object.spec.items.all(i, v, v.all(a, b, b.c == 1))\n | .........................................^\n"},
		{FieldRef: "spec.validations[11].expression",
			Warning: "example.com/v1, Kind=Widget: ERROR: <input>:1:12: expression of type 'Widget.spec.extra' cannot be range of a comprehension (must be list, map, or dynamic)\n | object.spec.extra.all(k, v, v)\n | ...........^\nERROR: <input>:1:29: expected type 'bool' but found ''\n | object.spec.extra.all(k, v, v)\n | ............................^\n"},
		{FieldRef: "spec.validations[11].messageExpression",
			Warning: "example.com/v1, Kind=Widget: ERROR: <input>:1:12: expression of type 'Widget.spec.extra' cannot be range of a comprehension (must be list, map, or dynamic)\n | object.spec.extra.transformList(k, v, v.x).join(',')\n | ...........^\nERROR: <input>:1:40: type '' does not support field selection\n | object.spec.extra.transformList(k, v, v.x).join(',')\n | .......................................^\n"},
	}
	var s spec.Schema
	if err := json.Unmarshal([]byte(schemaJSON), &s); err != nil {
		t.Fatal(err)
	}
	var p admissionregistrationv1.ValidatingAdmissionPolicy
	if err := yaml.Unmarshal([]byte(policyYAML), &p); err != nil {
		t.Fatal(err)
	}
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	kinds := meta.NewDefaultRESTMapper([]schema.GroupVersion{gv})
	kinds.Add(gv.WithKind("Widget"), meta.RESTScopeNamespace)
	resolver := typecheck.SchemaResolverFunc(func(schema.GroupVersionKind) (*spec.Schema, error) { return &s, nil })
	env, err := celenv.New(celenv.Options{Version: celenv.Version1_32})
	if err != nil {
		t.Fatal(err)
	}
	c, err := typecheck.NewChecker(typecheck.Options{Env: env, Resources: kinds, Schemas: resolver})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, c.Check(&p).Warnings); diff != "" {
		t.Errorf("1.32: Check() differs from upstream's (-upstream +vapkit):\n%s", diff)
	}
}
