package builtin

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

func gvk(g, v, k string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: g, Version: v, Kind: k}
}

func gvr(g, v, r string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: g, Version: v, Resource: r}
}

func TestNewScheme(t *testing.T) {
	if _, err := newScheme(); err != nil {
		t.Fatalf("newScheme() error = %v", err)
	}
	s := Scheme()
	for _, k := range []schema.GroupVersionKind{
		gvk("", "v1", "ConfigMap"),
		gvk("apps", "v1", "Deployment"),
		gvk("admission.k8s.io", "v1", "AdmissionReview"),
		gvk("meta.k8s.io", "v1", "CreateOptions"),
		gvk("meta.k8s.io", "v1", "DeleteOptions"),
		gvk("", "v1", "UpdateOptions"),
		gvk("resource.k8s.io", "v1beta2", "ResourceClaim"),
		gvk("storagemigration.k8s.io", "v1", "StorageVersionMigration"),
	} {
		if !s.Recognizes(k) {
			t.Errorf("Scheme().Recognizes(%v) = false, want true", k)
		}
	}
	gvks, _, err := s.ObjectKinds(&metav1.CreateOptions{})
	if err != nil || len(gvks) == 0 || gvks[0] != gvk("meta.k8s.io", "v1", "CreateOptions") {
		t.Errorf("ObjectKinds(CreateOptions) = %v, %v, want meta.k8s.io/v1 first", gvks, err)
	}
	// Every table row of a k8s.io/api group must be typed.
	for _, r := range Resources() {
		if r.Group == "apiextensions.k8s.io" || r.Group == "apiregistration.k8s.io" {
			continue
		}
		if !s.Recognizes(r.GroupVersionKind()) {
			t.Errorf("Scheme().Recognizes(%v) = false for table row %s", r.GroupVersionKind(), r.Plural)
		}
	}
}

func TestResources(t *testing.T) {
	rs := Resources()
	if len(rs) < 150 {
		t.Fatalf("len(Resources()) = %d, want at least 150", len(rs))
	}
	rs[0].Plural = "mutated"
	if Resources()[0].Plural == "mutated" {
		t.Errorf("Resources() shares its backing array")
	}
	seen := map[schema.GroupVersionResource]bool{}
	for _, r := range Resources() {
		if seen[r.GroupVersionResource()] {
			t.Errorf("duplicate row %v", r.GroupVersionResource())
		}
		seen[r.GroupVersionResource()] = true
	}
	for _, want := range []schema.GroupVersionResource{
		gvr("", "v1", "endpoints"), gvr("networking.k8s.io", "v1", "ingresses"),
		gvr("", "v1", "bindings"), gvr("authentication.k8s.io", "v1", "tokenreviews"),
		gvr("storage.k8s.io", "v1", "csistoragecapacities"), gvr("", "v1", "componentstatuses"),
	} {
		if !seen[want] {
			t.Errorf("Resources() lacks %v", want)
		}
	}
	for _, notWant := range []schema.GroupVersionResource{
		gvr("policy", "v1", "evictions"), gvr("imagepolicy.k8s.io", "v1alpha1", "imagereviews"),
		gvr("", "v1", "endpointses"),
	} {
		if seen[notWant] {
			t.Errorf("Resources() has %v", notWant)
		}
	}
}

func TestResourceFor(t *testing.T) {
	m, err := NewMapper(CRD{Group: "example.com", Kind: "Widget", Plural: "widgets", Namespaced: true, Versions: []string{"v1", "v2"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		gvk        schema.GroupVersionKind
		want       schema.GroupVersionResource
		namespaced bool
		unknown    bool
	}{
		{"core configmap", gvk("", "v1", "ConfigMap"), gvr("", "v1", "configmaps"), true, false},
		{"core pod", gvk("", "v1", "Pod"), gvr("", "v1", "pods"), true, false},
		{"core namespace", gvk("", "v1", "Namespace"), gvr("", "v1", "namespaces"), false, false},
		{"core node", gvk("", "v1", "Node"), gvr("", "v1", "nodes"), false, false},
		{"core endpoints", gvk("", "v1", "Endpoints"), gvr("", "v1", "endpoints"), true, false},
		{"deployment", gvk("apps", "v1", "Deployment"), gvr("apps", "v1", "deployments"), true, false},
		{"clusterrole", gvk("rbac.authorization.k8s.io", "v1", "ClusterRole"), gvr("rbac.authorization.k8s.io", "v1", "clusterroles"), false, false},
		{"vap", gvk("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy"), gvr("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies"), false, false},
		{"ingress", gvk("networking.k8s.io", "v1", "Ingress"), gvr("networking.k8s.io", "v1", "ingresses"), true, false},
		{"crd kind", gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"), gvr("apiextensions.k8s.io", "v1", "customresourcedefinitions"), false, false},
		{"custom v2", gvk("example.com", "v2", "Widget"), gvr("example.com", "v2", "widgets"), true, false},
		{"custom unserved", gvk("example.com", "v3", "Widget"), schema.GroupVersionResource{}, false, true},
		{"deployment in core", gvk("", "v1", "Deployment"), schema.GroupVersionResource{}, false, true},
		{"options kind", gvk("meta.k8s.io", "v1", "CreateOptions"), schema.GroupVersionResource{}, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ns, err := m.ResourceFor(tc.gvk)
			if tc.unknown {
				if !errors.Is(err, ErrUnknownKind) {
					t.Fatalf("ResourceFor(%v) error = %v, want ErrUnknownKind", tc.gvk, err)
				}
				return
			}
			if err != nil || got != tc.want || ns != tc.namespaced {
				t.Errorf("ResourceFor(%v) = %v, %v, %v, want %v, %v", tc.gvk, got, ns, err, tc.want, tc.namespaced)
			}
		})
	}
	_, _, err = m.ResourceFor(gvk("rules.example.com", "v1", "ReplicaLimit"))
	if want := `no matches for kind "ReplicaLimit" in version "rules.example.com/v1"`; err == nil || err.Error() != want {
		t.Errorf("ResourceFor(ReplicaLimit) error = %v, want %s", err, want)
	}
}

func TestNamespaced(t *testing.T) {
	m, err := NewMapper(CRD{Group: "example.com", Kind: "Gizmo", Plural: "gizmos", Versions: []string{"v1"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		gr               schema.GroupResource
		namespaced, know bool
	}{
		{schema.GroupResource{Resource: "namespaces"}, false, true},
		{schema.GroupResource{Resource: "nodes"}, false, true},
		{schema.GroupResource{Resource: "pods"}, true, true},
		{schema.GroupResource{Group: "apps", Resource: "deployments"}, true, true},
		{schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}, false, true},
		{schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "roles"}, true, true},
		{schema.GroupResource{Group: "example.com", Resource: "gizmos"}, false, true},
		{schema.GroupResource{Group: "example.com", Resource: "widgets"}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.gr.String(), func(t *testing.T) {
			ns, known := m.Namespaced(tc.gr)
			if ns != tc.namespaced || known != tc.know {
				t.Errorf("Namespaced(%v) = %v, %v, want %v, %v", tc.gr, ns, known, tc.namespaced, tc.know)
			}
		})
	}
}

func TestKindFor(t *testing.T) {
	m, err := NewMapper(CRD{Group: "example.com", Kind: "Widget", Plural: "widgets", Namespaced: true,
		Versions: []string{"v1", "v2"}, StatusVersions: []string{"v2"}, ScaleVersions: []string{"v1", "v2"}})
	if err != nil {
		t.Fatal(err)
	}
	scale := gvk("autoscaling", "v1", "Scale")
	tests := []struct {
		gvr  schema.GroupVersionResource
		sub  string
		want schema.GroupVersionKind
	}{
		{gvr("apps", "v1", "deployments"), "", gvk("apps", "v1", "Deployment")},
		{gvr("apps", "v1", "deployments"), "status", gvk("apps", "v1", "Deployment")},
		{gvr("apps", "v1", "deployments"), "scale", scale},
		{gvr("apps", "v1", "replicasets"), "scale", scale},
		{gvr("apps", "v1", "statefulsets"), "scale", scale},
		{gvr("apps", "v1", "daemonsets"), "scale", schema.GroupVersionKind{}},
		{gvr("", "v1", "replicationcontrollers"), "scale", scale},
		{gvr("", "v1", "pods"), "log", gvk("", "v1", "Pod")},
		{gvr("", "v1", "pods"), "exec", gvk("", "v1", "PodExecOptions")},
		{gvr("", "v1", "pods"), "attach", gvk("", "v1", "PodAttachOptions")},
		{gvr("", "v1", "pods"), "portforward", gvk("", "v1", "PodPortForwardOptions")},
		{gvr("", "v1", "pods"), "proxy", gvk("", "v1", "PodProxyOptions")},
		{gvr("", "v1", "pods"), "eviction", gvk("policy", "v1", "Eviction")},
		{gvr("", "v1", "pods"), "binding", gvk("", "v1", "Binding")},
		{gvr("", "v1", "pods"), "ephemeralcontainers", gvk("", "v1", "Pod")},
		{gvr("", "v1", "pods"), "status", gvk("", "v1", "Pod")},
		{gvr("", "v1", "serviceaccounts"), "token", gvk("authentication.k8s.io", "v1", "TokenRequest")},
		{gvr("", "v1", "nodes"), "proxy", gvk("", "v1", "NodeProxyOptions")},
		{gvr("", "v1", "services"), "proxy", gvk("", "v1", "ServiceProxyOptions")},
		{gvr("", "v1", "namespaces"), "finalize", gvk("", "v1", "Namespace")},
		{gvr("", "v1", "configmaps"), "status", schema.GroupVersionKind{}},
		{gvr("certificates.k8s.io", "v1", "certificatesigningrequests"), "approval", gvk("certificates.k8s.io", "v1", "CertificateSigningRequest")},
		{gvr("apps", "v1beta2", "deployments"), "scale", gvk("apps", "v1beta2", "Scale")},
		{gvr("example.com", "v1", "widgets"), "", gvk("example.com", "v1", "Widget")},
		{gvr("example.com", "v1", "widgets"), "status", schema.GroupVersionKind{}},
		{gvr("example.com", "v2", "widgets"), "status", gvk("example.com", "v2", "Widget")},
		{gvr("example.com", "v2", "widgets"), "scale", scale},
		{gvr("example.com", "v3", "widgets"), "", schema.GroupVersionKind{}},
		{gvr("example.com", "v1", "gadgets"), "", schema.GroupVersionKind{}},
	}
	for _, tc := range tests {
		t.Run(tc.gvr.String()+"/"+tc.sub, func(t *testing.T) {
			if got := m.KindFor(tc.gvr, tc.sub); got != tc.want {
				t.Errorf("KindFor(%v, %q) = %v, want %v", tc.gvr, tc.sub, got, tc.want)
			}
		})
	}
}

func TestEquivalentResourcesFor(t *testing.T) {
	m, err := NewMapper(CRD{Group: "example.com", Kind: "Gadget", Plural: "gadgets", Namespaced: true,
		Versions: []string{"v2", "v1"}, StatusVersions: []string{"v1"}})
	if err != nil {
		t.Fatal(err)
	}
	hpa1, hpa2 := gvr("autoscaling", "v1", "horizontalpodautoscalers"), gvr("autoscaling", "v2", "horizontalpodautoscalers")
	tests := []struct {
		name string
		gvr  schema.GroupVersionResource
		sub  string
		want []schema.GroupVersionResource
	}{
		{"crd all served versions in spec order", gvr("example.com", "v1", "gadgets"), "", []schema.GroupVersionResource{gvr("example.com", "v2", "gadgets"), gvr("example.com", "v1", "gadgets")}},
		{"crd status only where declared", gvr("example.com", "v1", "gadgets"), "status", []schema.GroupVersionResource{gvr("example.com", "v1", "gadgets")}},
		{"deployment alone", gvr("apps", "v1", "deployments"), "", []schema.GroupVersionResource{gvr("apps", "v1", "deployments")}},
		{"deployment scale", gvr("apps", "v1", "deployments"), "scale", []schema.GroupVersionResource{gvr("apps", "v1", "deployments")}},
		{"hpa versions", hpa1, "", []schema.GroupVersionResource{hpa2, hpa1}},
		{"hpa status", hpa2, "status", []schema.GroupVersionResource{hpa2, hpa1}},
		{"events across groups", gvr("events.k8s.io", "v1", "events"), "", []schema.GroupVersionResource{gvr("", "v1", "events"), gvr("events.k8s.io", "v1", "events")}},
		{"beta not served by default", gvr("resource.k8s.io", "v1beta1", "resourceclaims"), "", []schema.GroupVersionResource{gvr("resource.k8s.io", "v1beta1", "resourceclaims")}},
		{"unknown subresource", gvr("apps", "v1", "deployments"), "nope", nil},
		{"unknown resource", gvr("example.com", "v1", "widgets"), "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := m.EquivalentResourcesFor(tc.gvr, tc.sub)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("EquivalentResourcesFor(%v, %q) mismatch (-want +got):\n%s", tc.gvr, tc.sub, diff)
			}
		})
	}
}

func TestNewMapperErrors(t *testing.T) {
	tests := []struct {
		name string
		crds []CRD
		want string
	}{
		{"missing plural", []CRD{{Group: "example.com", Kind: "W", Versions: []string{"v1"}}}, "required"},
		{"builtin resource", []CRD{{Group: "apps", Kind: "Thing", Plural: "deployments", Versions: []string{"v1"}}}, "built in"},
		{"builtin kind", []CRD{{Group: "apps", Kind: "Deployment", Plural: "things", Versions: []string{"v1"}}}, "built in"},
		{"duplicate", []CRD{
			{Group: "example.com", Kind: "W", Plural: "ws", Versions: []string{"v1"}},
			{Group: "example.com", Kind: "X", Plural: "ws", Versions: []string{"v1"}},
		}, "defined twice"},
		{"duplicate kind", []CRD{
			{Group: "example.com", Kind: "W", Plural: "ws", Versions: []string{"v1"}},
			{Group: "example.com", Kind: "W", Plural: "xs", Versions: []string{"v1"}},
		}, "another CRD"},
		{"duplicate version", []CRD{{Group: "example.com", Kind: "W", Plural: "ws", Versions: []string{"v1", "v1"}}}, "listed twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewMapper(tc.crds...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewMapper() error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestCRDFromUnstructured(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		want    CRD
		wantErr []string
	}{
		{
			name: "namespaced two served versions",
			yaml: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, subresources: {status: {}}}
  - {name: v2, served: true, storage: false, subresources: {scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}}}
  - {name: v3, served: false, storage: false}`,
			want: CRD{Group: "example.com", Kind: "Gadget", Plural: "gadgets", Singular: "gadget", Namespaced: true,
				Versions: []string{"v1", "v2"}, StatusVersions: []string{"v1"}, ScaleVersions: []string{"v2"}},
		},
		{
			name: "cluster",
			yaml: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: replicalimits.rules.example.com}
spec:
  group: rules.example.com
  names: {kind: ReplicaLimit, plural: replicalimits, singular: limit}
  scope: Cluster
  versions: [{name: v1, served: true, storage: true}]`,
			want: CRD{Group: "rules.example.com", Kind: "ReplicaLimit", Plural: "replicalimits", Singular: "limit", Versions: []string{"v1"}},
		},
		{
			name: "missing fields",
			yaml: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: broken}
spec:
  names: {kind: 7}
  scope: Global`,
			wantErr: []string{"spec.group: Required value", "spec.names.kind: Invalid value", "spec.names.plural: Required value",
				`spec.scope: Unsupported value: "Global"`, "spec.versions: Required value"},
		},
		{
			name: "bad version entry",
			yaml: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec:
  group: example.com
  names: {kind: W, plural: ws}
  scope: Cluster
  versions: [{served: true}, {name: v2, served: "yes"}]`,
			wantErr: []string{"spec.versions[0].name: Required value", "spec.versions[1].served: Invalid value"},
		},
		{
			name:    "wrong kind",
			yaml:    `{apiVersion: v1, kind: ConfigMap}`,
			wantErr: []string{"expected apiextensions.k8s.io/v1, Kind=CustomResourceDefinition"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(tc.yaml), &u.Object); err != nil {
				t.Fatal(err)
			}
			got, err := CRDFromUnstructured(u)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("CRDFromUnstructured() = %+v, want error", got)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("CRDFromUnstructured() error = %v, want it to contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("CRDFromUnstructured() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CRDFromUnstructured() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func fromYAML(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestToUnstructured(t *testing.T) {
	replicas := int32(2)
	tests := []struct {
		name string
		obj  func(t *testing.T) runtime.Object
		want string // YAML
	}{
		{
			name: "typed deployment without status",
			obj: func(*testing.T) runtime.Object {
				return &appsv1.Deployment{
					ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
					Spec:       appsv1.DeploymentSpec{Replicas: &replicas},
				}
			},
			want: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: null
  strategy: {}
  template: {metadata: {}, spec: {containers: null}}
status: {}`,
		},
		{
			name: "unstructured deployment from the conformance case",
			obj: func(t *testing.T) runtime.Object {
				return fromYAML(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  paused: false
  unknownField: 42
  replicas: 1
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: "25%", maxUnavailable: 1}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx
        ports: [{containerPort: 80}]`)
			},
			want: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: "25%", maxUnavailable: 1}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx
        ports: [{containerPort: 80}]
        resources: {}
status: {}`,
		},
		{
			name: "unstructured configmap",
			obj: func(t *testing.T) runtime.Object {
				return fromYAML(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: limits, namespace: default, creationTimestamp: null}, data: {max: "3"}, extra: true}`)
			},
			want: `{apiVersion: v1, kind: ConfigMap, metadata: {name: limits, namespace: default}, data: {max: "3"}}`,
		},
		{
			name: "typed configmap without type meta",
			obj: func(*testing.T) runtime.Object {
				return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"k": "v"}}
			},
			want: `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {k: v}}`,
		},
		{
			name: "create options",
			obj:  func(*testing.T) runtime.Object { return &metav1.CreateOptions{} },
			want: `{apiVersion: meta.k8s.io/v1, kind: CreateOptions}`,
		},
		{
			name: "custom kind as written",
			obj: func(t *testing.T) runtime.Object {
				return fromYAML(t, `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {size: 3, ratio: 0.5, unknown: [1, {a: null}]}}`)
			},
			want: `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {size: 3, ratio: 0.5, unknown: [1, {a: null}]}}`,
		},
		{
			name: "raw json",
			obj: func(*testing.T) runtime.Object {
				return &runtime.Unknown{Raw: []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"},"bogus":1}`)}
			},
			want: `{apiVersion: v1, kind: Namespace, metadata: {name: team-a}, spec: {}, status: {}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ToUnstructured(tc.obj(t))
			if err != nil {
				t.Fatalf("ToUnstructured() error = %v", err)
			}
			want := fromYAML(t, tc.want).Object
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ToUnstructured() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestToUnstructuredDoesNotAlias(t *testing.T) {
	u := fromYAML(t, `{apiVersion: example.com/v1, kind: Widget, spec: {list: [1]}}`)
	got, err := ToUnstructured(u)
	if err != nil {
		t.Fatal(err)
	}
	got["spec"].(map[string]any)["list"].([]any)[0] = "changed"
	if v := u.Object["spec"].(map[string]any)["list"].([]any)[0]; v != int64(1) {
		t.Errorf("input changed to %v", v)
	}
}

func TestToUnstructuredNumbers(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"a": 1, "b": uint32(2), "c": float32(0.5), "d": json.Number("7"), "e": []any{int8(3)},
	}}
	got, err := ToUnstructured(u)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"a": int64(1), "b": int64(2), "c": float64(0.5), "d": int64(7), "e": []any{int64(3)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ToUnstructured() mismatch (-want +got):\n%s", diff)
	}
}

func TestToUnstructuredErrors(t *testing.T) {
	tests := []struct {
		name string
		obj  runtime.Object
		want string
	}{
		{"nil", nil, "object is nil"},
		{"typed nil", (*appsv1.Deployment)(nil), "nil *v1.Deployment"},
		{"bad value", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x/v1", "kind": "K", "spec": map[string]any{"c": make(chan int)}}}, "spec.c: unsupported value of type chan int"},
		{"overflow", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x/v1", "kind": "K", "n": uint64(1 << 63)}}, "n: 9223372036854775808 overflows int64"},
		{"built-in with wrong type", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"replicas": "x"}}}, "decoding apps/v1, Kind=Deployment"},
		{"yaml unknown", &runtime.Unknown{Raw: []byte("a: b"), ContentType: "application/yaml"}, "unsupported content type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ToUnstructured(tc.obj)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ToUnstructured() error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestDecodeJSON(t *testing.T) {
	tests := []struct {
		name     string
		raw      string
		wantType string
		wantErr  bool
	}{
		{"deployment", `{"apiVersion":"apps/v1","kind":"Deployment","spec":{"unknown":1}}`, "*v1.Deployment", false},
		{"configmap", `{"apiVersion":"v1","kind":"ConfigMap"}`, "*v1.ConfigMap", false},
		{"custom", `{"apiVersion":"example.com/v1","kind":"Widget"}`, "*unstructured.Unstructured", false},
		{"built-in kind in wrong group", `{"apiVersion":"v1","kind":"Deployment"}`, "*unstructured.Unstructured", false},
		{"no kind", `{"apiVersion":"v1"}`, "", true},
		{"not an object", `[1]`, "", true},
		{"invalid", `{`, "", true},
		{"case-sensitive fields", `{"apiVersion":"v1","kind":"ConfigMap","Data":{"a":"b"}}`, "*v1.ConfigMap", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := DecodeJSON([]byte(tc.raw))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("DecodeJSON(%s) = %T, want error", tc.raw, obj)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeJSON(%s) error = %v", tc.raw, err)
			}
			if got := typeName(obj); got != tc.wantType {
				t.Errorf("DecodeJSON(%s) = %s, want %s", tc.raw, got, tc.wantType)
			}
		})
	}
	obj, err := DecodeJSON([]byte(`{"apiVersion":"v1","kind":"ConfigMap","Data":{"a":"b"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if cm := obj.(*corev1.ConfigMap); cm.Data != nil {
		t.Errorf("DecodeJSON matched field Data case-insensitively: %v", cm.Data)
	}
}

func typeName(obj runtime.Object) string {
	switch obj.(type) {
	case *appsv1.Deployment:
		return "*v1.Deployment"
	case *corev1.ConfigMap:
		return "*v1.ConfigMap"
	case *unstructured.Unstructured:
		return "*unstructured.Unstructured"
	}
	return "other"
}

// TestConformanceTypedObject feeds the object of the conformance case
// typed-object-representation (the repository's copy, so that a clean
// clone runs it) through ToUnstructured and checks the facts its policy
// tests.
func TestConformanceTypedObject(t *testing.T) {
	path := filepath.Join("..", "..", "policy", "testdata", "cases", "typed-object-representation.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var object map[string]any
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		if m["kind"] == "AdmissionReview" {
			object = m["request"].(map[string]any)["object"].(map[string]any)
		}
	}
	raw, err := json.Marshal(object)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := DecodeJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	spec := got["spec"].(map[string]any)
	if _, ok := spec["paused"]; ok {
		t.Errorf("has(object.spec.paused) = true, want false")
	}
	if _, ok := got["status"]; !ok {
		t.Errorf("has(object.status) = false, want true")
	}
	if _, ok := spec["unknownField"]; ok {
		t.Errorf("has(object.spec.unknownField) = true, want false")
	}
	ru := spec["strategy"].(map[string]any)["rollingUpdate"].(map[string]any)
	if ru["maxSurge"] != "25%" || ru["maxUnavailable"] != int64(1) {
		t.Errorf("rollingUpdate = %v, want maxSurge '25%%' and maxUnavailable 1", ru)
	}
	port := spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["ports"].([]any)[0].(map[string]any)
	if port["containerPort"] != int64(80) {
		t.Errorf("containerPort = %#v, want int64(80)", port["containerPort"])
	}
	if _, ok := got["metadata"].(map[string]any)["creationTimestamp"]; ok {
		t.Errorf("metadata.creationTimestamp present, want absent")
	}
}

func FuzzToUnstructured(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":1}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"b"}}`,
		`{"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"500m"}}}]}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","spec":{"x":[1,2.5,null,true]}}`,
		`{"apiVersion":"v1","kind":"List","items":[{"kind":"ConfigMap","apiVersion":"v1"}]}`,
		`{"apiVersion":"meta.k8s.io/v1","kind":"DeleteOptions","gracePeriodSeconds":1e30}`,
		`{"kind":"Status","apiVersion":"v1"}`,
		`{`,
		`null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		obj, err := DecodeJSON(raw)
		if err != nil {
			return
		}
		if _, err := ToUnstructured(obj); err != nil {
			return
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return
		}
		_, _ = ToUnstructured(u)
	})
}

func TestMapperConcurrent(t *testing.T) {
	m, err := NewMapper(CRD{Group: "example.com", Kind: "Widget", Plural: "widgets", Versions: []string{"v1"}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 100 {
				if _, _, err := m.ResourceFor(gvk("apps", "v1", "Deployment")); err != nil {
					t.Error(err)
				}
				m.EquivalentResourcesFor(gvr("example.com", "v1", "widgets"), "")
				if _, err := ToUnstructured(&corev1.ConfigMap{}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
}

// TestKindsFor checks the discovery answers the type checker relies on:
// partial group versions, singular names in any case, only versions served
// by default, and sorted answers.
func TestKindsFor(t *testing.T) {
	m, err := NewMapper(
		CRD{Group: "example.com", Kind: "Widget", Plural: "widgets", Singular: "wid", Namespaced: true, Versions: []string{"v2", "v1"}},
		CRD{Group: "other.example.com", Kind: "Widget", Plural: "widgets", Versions: []string{"v1"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	gvr := func(g, v, r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: g, Version: v, Resource: r}
	}
	gvk := func(g, v, k string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: g, Version: v, Kind: k}
	}
	tests := []struct {
		name    string
		in      schema.GroupVersionResource
		want    []schema.GroupVersionKind
		wantErr bool
	}{
		{name: "built-in plural", in: gvr("apps", "v1", "deployments"), want: []schema.GroupVersionKind{gvk("apps", "v1", "Deployment")}},
		{name: "built-in singular in any case", in: gvr("apps", "v1", "Deployment"), want: []schema.GroupVersionKind{gvk("apps", "v1", "Deployment")}},
		{name: "beta versions are not served", in: gvr("apps", "v1beta1", "deployments"), wantErr: true},
		{name: "CRD singular", in: gvr("example.com", "v1", "wid"), want: []schema.GroupVersionKind{gvk("example.com", "v1", "Widget")}},
		{name: "any version, sorted", in: gvr("example.com", "", "widgets"),
			want: []schema.GroupVersionKind{gvk("example.com", "v1", "Widget"), gvk("example.com", "v2", "Widget")}},
		{name: "any group, sorted", in: gvr("", "v1", "widgets"),
			want: []schema.GroupVersionKind{gvk("example.com", "v1", "Widget"), gvk("other.example.com", "v1", "Widget")}},
		{name: "unknown", in: gvr("example.com", "v1", "gizmos"), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := m.KindsFor(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("KindsFor(%v) = %v, %v; want error %t", tc.in, got, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("KindsFor(%v) mismatch (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}
