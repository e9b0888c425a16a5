package policy_test

import (
	"fmt"
	"log"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
`

// requestView is what NewRequest derives, for comparison.
type requestView struct {
	Kind            schema.GroupVersionKind
	Resource        schema.GroupVersionResource
	SubResource     string
	Name, Namespace string
	Options         string
	ObjectNamespace string
}

func viewOf(r *policy.Request) requestView {
	v := requestView{Kind: r.Kind, Resource: r.Resource, SubResource: r.SubResource, Name: r.Name, Namespace: r.Namespace}
	if r.Options != nil {
		v.Options = r.Options.GetObjectKind().GroupVersionKind().Kind
	}
	o := r.Object
	if o == nil {
		o = r.OldObject
	}
	if m, ok := o.(metav1.Object); ok {
		v.ObjectNamespace = m.GetNamespace()
	}
	return v
}

func TestNewRequest(t *testing.T) {
	m, err := manifest.Load([]byte(widgetCRD), "crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	withCRD, err := manifest.NewResourceMapper(m.CRDs...)
	if err != nil {
		t.Fatal(err)
	}
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod"}}
	deployGVK := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	deployGVR := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
	}}
	tests := []struct {
		name    string
		op      admissionv1.Operation
		obj     runtime.Object
		old     runtime.Object
		opts    policy.RequestOptions
		want    requestView
		wantErr string
	}{{
		name: "typed object without apiVersion and kind",
		op:   admissionv1.Create, obj: deploy,
		want: requestView{Kind: deployGVK, Resource: deployGVR, Name: "web", Namespace: "prod", Options: "CreateOptions", ObjectNamespace: "prod"},
	}, {
		name: "update",
		op:   admissionv1.Update, obj: deploy, old: deploy,
		want: requestView{Kind: deployGVK, Resource: deployGVR, Name: "web", Namespace: "prod", Options: "UpdateOptions", ObjectNamespace: "prod"},
	}, {
		name: "delete takes the old object",
		op:   admissionv1.Delete, old: deploy,
		want: requestView{Kind: deployGVK, Resource: deployGVR, Name: "web", Namespace: "prod", Options: "DeleteOptions", ObjectNamespace: "prod"},
	}, {
		name: "namespaced object without namespace goes to default",
		op:   admissionv1.Create, obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}},
		want: requestView{Kind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
			Name: "c", Namespace: "default", Options: "CreateOptions", ObjectNamespace: "default"},
	}, {
		name: "cluster-scoped object",
		op:   admissionv1.Create, obj: &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "admin"}},
		want: requestView{Kind: schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
			Resource: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
			Name:     "admin", Options: "CreateOptions"},
	}, {
		name: "namespace request is in its own namespace",
		op:   admissionv1.Create, obj: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod"}},
		want: requestView{Kind: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"},
			Name: "prod", Namespace: "prod", Options: "CreateOptions"},
	}, {
		name: "subresource of the object's own resource",
		op:   admissionv1.Update, obj: deploy, old: deploy, opts: policy.RequestOptions{SubResource: "status"},
		want: requestView{Kind: deployGVK, Resource: deployGVR, SubResource: "status", Name: "web", Namespace: "prod", Options: "UpdateOptions", ObjectNamespace: "prod"},
	}, {
		name: "scale subresource with the resource given",
		op:   admissionv1.Update,
		obj:  &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod"}},
		opts: policy.RequestOptions{SubResource: "scale", Resource: deployGVR},
		want: requestView{Kind: schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}, Resource: deployGVR, SubResource: "scale",
			Name: "web", Namespace: "prod", Options: "UpdateOptions", ObjectNamespace: "prod"},
	}, {
		name: "custom resource through a mapper with its CRD",
		op:   admissionv1.Create, obj: widget, opts: policy.RequestOptions{Resources: withCRD},
		want: requestView{Kind: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"},
			Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"},
			Name:     "w", Namespace: "default", Options: "CreateOptions", ObjectNamespace: "default"},
	}, {
		name: "custom resource without its CRD",
		op:   admissionv1.Create, obj: widget,
		wantErr: `no matches for kind "Widget" in version "example.com/v1"`,
	}, {
		name:    "no object",
		op:      admissionv1.Create,
		wantErr: "request needs an object or an old object",
	}, {
		name: "bad operation",
		op:   "PATCH", obj: deploy,
		wantErr: "invalid request: operation: Unsupported value",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := []runtime.Object{}
			for _, o := range []runtime.Object{tc.obj, tc.old} {
				if o != nil {
					before = append(before, o.DeepCopyObject())
				}
			}
			got, err := policy.NewRequest(tc.op, tc.obj, tc.old, tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("NewRequest() error = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewRequest() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, viewOf(got)); diff != "" {
				t.Errorf("NewRequest() mismatch (-want +got):\n%s", diff)
			}
			after := []runtime.Object{}
			for _, o := range []runtime.Object{tc.obj, tc.old} {
				if o != nil {
					after = append(after, o)
				}
			}
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("NewRequest modified its objects (-before +after):\n%s", diff)
			}
		})
	}
}

// TestEvaluatorRequest checks that Evaluator.Request knows the evaluator's
// CRDs and passes the optional fields through.
func TestEvaluatorRequest(t *testing.T) {
	m, err := manifest.Load([]byte(widgetCRD), "crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := policy.Compile(nil, nil, policy.Options{CRDs: m.CRDs})
	if err != nil {
		t.Fatal(err)
	}
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "a"},
	}}
	user := authenticationv1.UserInfo{Username: "alice"}
	opts := &metav1.CreateOptions{FieldManager: "kubectl"}
	r, err := ev.Request(admissionv1.Create, widget, nil, policy.RequestOptions{UID: "u1", UserInfo: user, DryRun: true, Options: opts})
	if err != nil {
		t.Fatalf("Request() error = %v", err)
	}
	if r.Resource.Resource != "widgets" || r.UID != "u1" || r.UserInfo.Username != "alice" || !r.DryRun || r.Options != opts {
		t.Errorf("Request() = %+v, want widgets by alice, uid u1, dry run, the given options", r)
	}
	d, err := ev.Evaluate(t.Context(), r)
	if err != nil || !d.Allowed {
		t.Errorf("Evaluate() = %v, %v; want allowed", d, err)
	}
}

// Build a request from a typed object: kind, resource, name and namespace
// come from the object.
func ExampleNewRequest() {
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod"}}
	req, err := policy.NewRequest(admissionv1.Create, deploy, nil, policy.RequestOptions{
		UserInfo: authenticationv1.UserInfo{Username: "alice"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(req.Operation, req.Kind.Kind, req.Resource.Resource, req.Namespace+"/"+req.Name, req.UserInfo.Username)
	// Output: CREATE Deployment deployments prod/web alice
}
