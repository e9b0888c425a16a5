package typecheck_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/policy/manifest"
	"github.com/vapkit/vapkit/typecheck"
)

// crWidgetCRD has one served and one unserved version; v1's schema
// exercises the checks the validator makes.
const crWidgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        required: [spec]
        properties:
          spec:
            type: object
            required: [size]
            properties:
              replicas: {type: integer, minimum: 0, maximum: 10}
              size: {type: string, enum: [small, large]}
              name: {type: string, maxLength: 5, pattern: "^[a-z]+$"}
              mode: {type: string, default: fast, enum: [fast, slow]}
              port: {x-kubernetes-int-or-string: true}
              email: {type: string, format: email}
              color: {type: string, format: no-such-format}
              tags: {type: array, maxItems: 2, items: {type: string}}
              labels: {type: object, maxProperties: 1, additionalProperties: {type: string}}
              ratio: {type: number, multipleOf: 0.5}
              level: {type: number, enum: [1, 2.5]}
              opt: {type: string, nullable: true}
              ids: {type: array, x-kubernetes-list-type: set, items: {type: string}}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items: {type: object, properties: {name: {type: string}, port: {type: integer}}}
  - name: v2
    served: false
    storage: false
    schema:
      openAPIV3Schema: {type: object}
`

func widget(t *testing.T, spec string) *unstructured.Unstructured {
	t.Helper()
	doc := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\n" + spec
	m, err := manifest.Load([]byte(doc), "widget.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return m.Objects[0].(*unstructured.Unstructured)
}

func widgetValidator(t *testing.T) *typecheck.CustomResourceValidator {
	t.Helper()
	m, err := manifest.Load([]byte(crWidgetCRD), "crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	v, err := typecheck.NewCustomResourceValidator(m.CRDs...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCustomResourceValidator(t *testing.T) {
	v := widgetValidator(t)
	for _, tc := range []struct {
		name, spec string
		want       []string
	}{
		{"valid", "spec: {size: small, replicas: 3, name: abc, port: 80, email: a@b.c, tags: [x], labels: {a: b}, ratio: 1.5, opt: null}", nil},
		{"int or string", "spec: {size: small, port: http}", nil},
		{"unknown fields are pruned, not refused", "spec: {size: small, extra: 1}\nstatus: {x: 1}", nil},
		{"unsupported format is dropped", "spec: {size: small, color: anything}", nil},
		{"default satisfies enum", "spec: {size: small, mode: null}", nil},
		{"enum of whole numbers matches truncated values, as upstream's", "spec: {size: small, level: 1.5}", nil},
		{"number enum", "spec: {size: small, level: 2}", []string{
			`spec.level: Unsupported value: 2: supported values: "1", "2.5"`}},
		{"set", "spec: {size: small, ids: [a, b, a, a]}", []string{`spec.ids[2]: Duplicate value: "a"`}},
		{"map list", "spec: {size: small, ports: [{name: a, port: 1}, {name: b}, {name: a, port: 2}]}", []string{
			`spec.ports[2]: Duplicate value: {"name":"a"}`}},
		{"map list item not an object", "spec: {size: small, ports: [{name: a}, 3]}", []string{
			`spec.ports[1]: Invalid value: "integer": spec.ports[1] in body must be of type object: "integer"`,
			`spec.ports[1]: Invalid value: 3: must be an object for an array of list-type map`}},
		{"wrong type", `spec: {size: small, replicas: "3"}`, []string{
			`spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`}},
		{"missing spec", "", []string{`spec: Required value`}},
		{"missing required", "spec: {replicas: 1}", []string{`spec.size: Required value`}},
		{"enum", "spec: {size: huge}", []string{
			`spec.size: Unsupported value: "huge": supported values: "small", "large"`}},
		{"min and max", "spec: {size: small, replicas: 11}", []string{
			`spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10`}},
		{"negative", "spec: {size: small, replicas: -1}", []string{
			`spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0`}},
		{"maxLength and pattern", "spec: {size: small, name: ABCDEFG}", []string{
			`spec.name: Too long: may not be more than 5 bytes`}}, // kube-openapi stops at the first string check
		{"pattern", "spec: {size: small, name: AB}", []string{
			`spec.name: Invalid value: "AB": spec.name in body should match '^[a-z]+$'`}},
		{"format", "spec: {size: small, email: nope}", []string{
			`spec.email: Invalid value: "nope": spec.email in body must be of type email: "nope"`}},
		{"maxItems", "spec: {size: small, tags: [a, b, c]}", []string{
			`spec.tags: Too many: 3: must have at most 2 items`}},
		{"maxProperties", "spec: {size: small, labels: {a: b, c: d}}", []string{
			`spec.labels: Too many: 2: must have at most 1 item`}},
		{"multipleOf", "spec: {size: small, ratio: 0.7}", []string{
			`spec.ratio: Invalid value: 0.7: spec.ratio in body should be a multiple of 0.5`}},
		{"int or string refuses a bool", "spec: {size: small, port: true}", []string{
			`spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"`}},
		{"a null without default where not nullable is pruned", "spec: {size: small, name: null}", nil},
		{"a null list item is not pruned", "spec: {size: small, tags: [null]}", []string{
			`spec.tags[0]: Invalid value: "null": spec.tags[0] in body must be of type string: "null"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range v.Validate(widget(t, tc.spec)) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestCustomResourceValidatorKinds(t *testing.T) {
	v := widgetValidator(t)
	for gvk, want := range map[schema.GroupVersionKind]bool{
		{Group: "example.com", Version: "v1", Kind: "Widget"}: true,
		{Group: "example.com", Version: "v2", Kind: "Widget"}: false, // not served
		{Group: "apps", Version: "v1", Kind: "Deployment"}:    false,
	} {
		if got := v.Knows(gvk); got != want {
			t.Errorf("Knows(%v) = %v, want %v", gvk, got, want)
		}
	}
	u := widget(t, "spec: {}")
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	if errs := v.Validate(u); errs != nil {
		t.Errorf("a kind of no CRD: %v", errs)
	}
	var nilValidator *typecheck.CustomResourceValidator
	if nilValidator.Knows(u.GroupVersionKind()) || nilValidator.Validate(u) != nil {
		t.Error("a nil validator checks nothing")
	}
	obj := widget(t, "spec: {size: small}")
	before := fmt.Sprint(obj.Object)
	v.Validate(obj)
	if fmt.Sprint(obj.Object) != before {
		t.Error("Validate modified its argument")
	}
}

func TestNewCustomResourceValidatorErrors(t *testing.T) {
	m, err := manifest.Load([]byte(strings.Replace(crWidgetCRD, "type: object\n        required: [spec]", "type: 5\n        required: [spec]", 1)), "crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := typecheck.NewCustomResourceValidator(m.CRDs...); err == nil || !strings.Contains(err.Error(), `CustomResourceDefinition "widgets.example.com": spec.versions[0].schema.openAPIV3Schema`) {
		t.Errorf("got %v", err)
	}
}

func TestCustomResourceValidatorUpdate(t *testing.T) {
	v := widgetValidator(t)
	for _, tc := range []struct {
		name, old, new string
		want           []string
	}{
		{"valid", "spec: {size: small}", "spec: {size: large}", nil},
		{"new invalid value", "spec: {size: small}", "spec: {size: huge}", []string{
			`spec.size: Unsupported value: "huge": supported values: "small", "large"`}},
		{"unchanged invalid value is ratcheted", "spec: {size: huge, replicas: 1}", "spec: {size: huge, replicas: 2}", nil},
		{"changed invalid value", "spec: {size: huge}", "spec: {size: tiny}", []string{
			`spec.size: Unsupported value: "tiny": supported values: "small", "large"`}},
		{"missing field of a changed object", "spec: {replicas: 1}", "spec: {replicas: 2}", []string{
			`spec.size: Required value`}},
		{"missing field of an unchanged object", "spec: {replicas: 1}", "metadata: {name: w, namespace: default, labels: {a: b}}\nspec: {replicas: 1}", nil},
		{"atomic list items are not correlated", "spec: {size: small, tags: [a, b, c]}", "spec: {size: small, tags: [a, b, c, d]}", []string{
			`spec.tags: Too many: 4: must have at most 2 items`}},
		{"unchanged atomic list", "spec: {size: small, tags: [a, b, c]}", "spec: {size: large, tags: [a, b, c]}", nil},
		{"new duplicate", "spec: {size: small, ids: [a]}", "spec: {size: small, ids: [a, a]}", []string{`spec.ids[1]: Duplicate value: "a"`}},
		{"duplicates already stored", "spec: {size: small, ids: [a, a]}", "spec: {size: small, ids: [a, a, b, b]}", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var newObj *unstructured.Unstructured
			if !strings.HasPrefix(tc.new, "metadata") {
				newObj = widget(t, tc.new)
			} else {
				m, err := manifest.Load([]byte("apiVersion: example.com/v1\nkind: Widget\n"+tc.new), "w.yaml")
				if err != nil {
					t.Fatal(err)
				}
				newObj = m.Objects[0].(*unstructured.Unstructured)
			}
			var got []string
			for _, e := range v.ValidateUpdate(newObj, widget(t, tc.old)) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	// Without an old object, an update is checked as a create.
	if errs := v.ValidateUpdate(widget(t, "spec: {}"), nil); len(errs) != 1 {
		t.Errorf("no old object: %v", errs)
	}
}

// TestCustomResourceValidatorUpdateMapList: items of map lists are
// correlated with the old item of the same key, wherever it is.
func TestCustomResourceValidatorUpdateMapList(t *testing.T) {
	m, err := manifest.Load([]byte(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          ports:
            type: array
            x-kubernetes-list-type: map
            x-kubernetes-list-map-keys: [name, proto]
            items:
              type: object
              required: [name, proto]
              properties:
                name: {type: string}
                proto: {type: string}
                port: {type: integer, maximum: 100}
`), "crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	v, err := typecheck.NewCustomResourceValidator(m.CRDs...)
	if err != nil {
		t.Fatal(err)
	}
	gadget := func(ports string) *unstructured.Unstructured {
		o, err := manifest.Load([]byte("apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: default}\nports: "+ports), "g.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return o.Objects[0].(*unstructured.Unstructured)
	}
	old := gadget("[{name: a, proto: tcp, port: 500}, {name: b, proto: tcp, port: 1}]")
	for ports, want := range map[string]string{
		// a keeps its invalid port at another index: ratcheted.
		"[{name: b, proto: tcp, port: 2}, {name: a, proto: tcp, port: 500}]": "",
		// a new key: not correlated.
		"[{name: a, proto: udp, port: 500}]": "ports[0].port: Invalid value: 500: ports[0].port in body should be less than or equal to 100",
		// a's invalid port changed.
		"[{name: a, proto: tcp, port: 501}]": "ports[0].port: Invalid value: 501: ports[0].port in body should be less than or equal to 100",
	} {
		var got []string
		for _, e := range v.ValidateUpdate(gadget(ports), old) {
			got = append(got, e.Error())
		}
		if strings.Join(got, "\n") != want {
			t.Errorf("ports %s: got %q, want %q", ports, got, want)
		}
	}
}

func TestCustomResourceValidatorMetadata(t *testing.T) {
	v := widgetValidator(t)
	if !v.Namespaced(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}) {
		t.Error("Widget is namespaced")
	}
	for meta, want := range map[string]string{
		"{name: w, namespace: default}":          "",
		"{generateName: w-, namespace: default}": "",
		"{name: Bad_Name, namespace: default}":   `metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		"{namespace: default}":                   "metadata.name: Required value: name or generateName is required",
		"{name: w}":                              "metadata.namespace: Required value",
	} {
		m, err := manifest.Load([]byte("apiVersion: example.com/v1\nkind: Widget\nmetadata: "+meta+"\nspec: {size: small}\n"), "w.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range v.Validate(m.Objects[0].(*unstructured.Unstructured)) {
			got = append(got, e.Error())
		}
		if g := strings.Join(got, "\n"); (want == "") != (g == "") || !strings.HasPrefix(g, want) {
			t.Errorf("metadata %s: got %q, want %q", meta, g, want)
		}
	}
}

// FuzzCustomResourceValidator: any Widget, created or updated from any
// other, is validated without panicking, and an unchanged update is not
// refused more than a create.
func FuzzCustomResourceValidator(f *testing.F) {
	f.Add("spec: {size: small, replicas: 3}", "spec: {size: huge, ports: [{name: a}, {name: a}]}")
	f.Add("spec: {ids: [a, a], labels: {a: b, c: d}, port: x}", "spec: 3")
	f.Add("spec: {tags: [1, {a: null}], ratio: 1e300}", "spec: {level: 1.5, opt: null, mode: null}")
	m, err := manifest.Load([]byte(crWidgetCRD), "crd.yaml")
	if err != nil {
		f.Fatal(err)
	}
	v, err := typecheck.NewCustomResourceValidator(m.CRDs...)
	if err != nil {
		f.Fatal(err)
	}
	load := func(spec string) *unstructured.Unstructured {
		m, err := manifest.Load([]byte("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\n"+spec), "w.yaml")
		if err != nil || len(m.Objects) != 1 {
			return nil
		}
		u, _ := m.Objects[0].(*unstructured.Unstructured)
		return u
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		oa, ob := load(a), load(b)
		if oa == nil || ob == nil {
			return
		}
		v.Validate(oa)
		v.ValidateUpdate(oa, ob)
		if errs := v.ValidateUpdate(oa, oa.DeepCopy()); len(errs) > len(v.Validate(oa)) {
			t.Errorf("an unchanged update is refused more than a create: %v", errs)
		}
	})
}
