package mutation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/internal/builtin"
)

// mergeLive is the Deployment the merge tests patch: keyed lists (containers
// by name, env by name, ports by containerPort and protocol with its
// default), a set (finalizers), an atomic struct (the selector), an atomic
// list (tolerations), empty and null fields, and two containers of the same
// name (the object is validated with duplicates allowed).
const mergeLive = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, tier: frontend}
  annotations: {}
  finalizers: [a, b]
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      tolerations: [{key: k, operator: Exists}]
      containers:
      - name: a
        image: a:1
        env: [{name: EX, value: "1"}, {name: EY, value: "2"}]
        ports: [{containerPort: 80}, {containerPort: 53, protocol: UDP}]
        resources: {limits: {cpu: "1.0", memory: 1Gi}}
      - name: b
        image: b:1
        ports: [{containerPort: 8080, protocol: TCP}, {containerPort: 8080, protocol: UDP}, {containerPort: 9090, protocol: TCP}]
      - name: c
        image: c:1
      - name: c
        image: c:2
`

// TestMergeTouched checks that mergeTouched merges every patch into the
// live Deployment exactly as structured-merge-diff's whole merge does, for
// the object typed (read by reflection) and unstructured, or declines.
func TestMergeTouched(t *testing.T) {
	patches := []string{
		`{metadata: {labels: {managed-by: platform}}}`,
		`{metadata: {labels: {}}}`,
		`{metadata: {annotations: {a: b}}}`,
		`{metadata: {labels: null}}`,
		`{metadata: {finalizers: [c, a]}}`,
		`{spec: {replicas: null}}`,
		`{spec: {replicas: 3, paused: true}}`,
		`{spec: {selector: {matchLabels: {app: api}}}}`,
		`{spec: {template: {spec: {tolerations: [{key: j, operator: Exists}]}}}}`,
		`{spec: {template: {spec: {containers: []}}}}`,
		`{spec: {template: {spec: {containers: [{name: b, image: b:2}]}}}}`,
		`{spec: {template: {spec: {containers: [{name: b, env: [{name: Z, value: z}]}, {name: a, env: [{name: EY, value: "3"}, {name: W, value: w}]}]}}}}`,
		`{spec: {template: {spec: {containers: [{name: new, image: n:1}, {name: a, image: a:2}]}}}}`,
		`{spec: {template: {spec: {containers: [{name: c, image: c:3}]}}}}`,
		`{spec: {template: {spec: {containers: [{name: a, ports: [{containerPort: 53, protocol: UDP, name: dns}, {containerPort: 80, protocol: TCP, name: http}]}]}}}}`,
		`{spec: {template: {spec: {containers: [{name: a, resources: {limits: {cpu: "2"}}}]}}}}`,
		`{spec: {template: {spec: {containers: [{name: a, env: []}]}}}}`,
		`{spec: {template: {spec: {containers: [{name: a, securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}}]}}}}`,
		`{spec: {template: {metadata: {labels: {team: x}}, spec: {securityContext: {fsGroup: 2000}, nodeSelector: {pool: p}}}}}`,
		`{spec: {template: {spec: {containers: [{name: a, image: a:3}, {name: b, env: [{name: Z, value: z}]}]}}}}`,
		`{spec: {template: {spec: {containers: [{name: b, image: b:9}, {name: z, image: z:1}, {name: x, image: x:1}]}}}}`,
		`{spec: {template: {spec: {containers: [{name: a, env: [{name: EX, value: "0"}, {name: EY, value: "9"}, {name: NEW, value: v}]}]}}}}`,
		`{spec: {template: {spec: {containers: [{name: a, env: [{name: EY}, {name: EX}]}]}}}}`,
		`{spec: {template: {spec: {containers: [{name: b, ports: [{containerPort: 8080, protocol: UDP, name: u}, {containerPort: 9090, protocol: TCP, name: t}]}]}}}}`,
		`{spec: {template: {spec: {containers: [{name: b, ports: [{containerPort: 9090, protocol: TCP, name: t}, {containerPort: 8080, protocol: TCP}]}]}}}}`,
		`{spec: {template: {spec: {containers: [{name: b, ports: [{containerPort: 8080, protocol: SCTP}, {containerPort: 8080, protocol: TCP, name: h}]}]}}}}`,
		`{spec: {template: {spec: {containers: [{name: b, ports: [{containerPort: 8080, protocol: TCP, name: h}, {containerPort: 7, protocol: TCP}, {containerPort: 8, protocol: UDP}]}]}}}}`,
		`{status: {replicas: 1}}`,
	}
	tc, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	typedObj := &appsv1.Deployment{}
	if err := yaml.UnmarshalStrict([]byte(mergeLive), typedObj); err != nil {
		t.Fatal(err)
	}
	u, err := builtin.ToUnstructured(typedObj)
	if err != nil {
		t.Fatal(err)
	}
	for _, live := range []struct {
		name string
		obj  runtime.Object
	}{{"typed", typedObj}, {"unstructured", &unstructured.Unstructured{Object: u}}} {
		for _, p := range patches {
			t.Run(live.name+" "+p, func(t *testing.T) {
				var pm map[string]any
				if err := yaml.Unmarshal([]byte(p), &pm); err != nil {
					t.Fatal(err)
				}
				patch := &unstructured.Unstructured{Object: pm}
				patch.SetGroupVersionKind(gvk)
				pt, err := tc.ObjectToTyped(patch)
				if err != nil {
					t.Fatal(err)
				}
				lt, err := tc.ObjectToTyped(live.obj, typed.AllowDuplicates)
				if err != nil {
					t.Fatal(err)
				}
				want, err := lt.Merge(pt)
				if err != nil {
					t.Fatal(err)
				}
				sc := scratches.Get().(*scratch)
				defer sc.release()
				fast, owned, err := tc.liveValue(sc, live.obj, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !owned && live.name == "typed" {
					t.Error("liveValue did not read the typed object into owned data")
				}
				for _, c := range []struct {
					live  *typed.TypedValue
					owned bool
				}{{lt, false}, {fast, owned}} {
					got, ok := mergeTouched(newCopier(value.NewFreelistAllocator()), c.live, pt, c.owned)
					if !ok {
						t.Fatal("mergeTouched declined a merge structured-merge-diff makes")
					}
					if diff := cmp.Diff(want.AsValue().Unstructured(), any(got)); diff != "" {
						t.Errorf("mergeTouched (owned %v) differs from Merge (-Merge +mergeTouched):\n%s", c.owned, diff)
					}
				}
			})
		}
	}
}
