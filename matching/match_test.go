package matching

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

func gvk(group, version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

func ptr[T any](v T) *T { return &v }

// testMapper returns the equivalent-resource registry of upstream's
// matching_test.go: deployments share storage across extensions and apps,
// and example.com widgets have no kind (to provoke "unknown kind").
func testMapper() runtime.EquivalentResourceMapper {
	m := runtime.NewEquivalentResourceRegistryWithIdentity(func(gr schema.GroupResource) string {
		switch gr.Resource {
		case "deployments":
			return "/deployments"
		case "widgets":
			return "/widgets"
		}
		return ""
	})
	m.RegisterKindFor(gvr("extensions", "v1beta1", "deployments"), "", gvk("extensions", "v1beta1", "Deployment"))
	m.RegisterKindFor(gvr("apps", "v1", "deployments"), "", gvk("apps", "v1", "Deployment"))
	m.RegisterKindFor(gvr("apps", "v1beta1", "deployments"), "", gvk("apps", "v1beta1", "Deployment"))
	m.RegisterKindFor(gvr("apps", "v1alpha1", "deployments"), "", gvk("apps", "v1alpha1", "Deployment"))
	m.RegisterKindFor(gvr("extensions", "v1beta1", "deployments"), "scale", gvk("extensions", "v1beta1", "Scale"))
	m.RegisterKindFor(gvr("apps", "v1", "deployments"), "scale", gvk("autoscaling", "v1", "Scale"))
	m.RegisterKindFor(gvr("apps", "v1beta1", "deployments"), "scale", gvk("apps", "v1beta1", "Scale"))
	m.RegisterKindFor(gvr("apps", "v1alpha1", "deployments"), "scale", gvk("apps", "v1alpha1", "Scale"))
	m.RegisterKindFor(gvr("example.com", "v1", "widgets"), "", gvk("", "", ""))
	m.RegisterKindFor(gvr("example.com", "v2", "widgets"), "", gvk("", "", ""))
	return m
}

// rule builds a NamedRuleWithOperations for all operations and scopes.
func rule(groups, versions, resources []string, names ...string) admissionregistrationv1.NamedRuleWithOperations {
	return admissionregistrationv1.NamedRuleWithOperations{
		ResourceNames: names,
		RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{"*"},
			Rule: admissionregistrationv1.Rule{
				APIGroups:   groups,
				APIVersions: versions,
				Resources:   resources,
				Scope:       ptr(admissionregistrationv1.AllScopes),
			},
		},
	}
}

func strs(s ...string) []string { return s }

// attrs builds a namespaced CREATE request for ns/name.
func attrs(kind schema.GroupVersionKind, res schema.GroupVersionResource, sub string) *Attributes {
	return &Attributes{Operation: "CREATE", Resource: res, SubResource: sub, Kind: kind, Namespace: "ns", Name: "name"}
}

// namespaces is a NamespaceGetter over a fixed set of namespaces that counts
// its calls.
type namespaces struct {
	byName map[string]*corev1.Namespace
	calls  atomic.Int64
}

func newNamespaces(nss ...*corev1.Namespace) *namespaces {
	n := &namespaces{byName: map[string]*corev1.Namespace{}}
	for _, ns := range nss {
		n.byName[ns.Name] = ns
	}
	return n
}

func (n *namespaces) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	n.calls.Add(1)
	if ns, ok := n.byName[name]; ok {
		return ns, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
}

func namespace(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// TestMatchRules mirrors upstream matching_test.go TestMatcher.
func TestMatchRules(t *testing.T) {
	t.Parallel()
	exact := ptr(admissionregistrationv1.Exact)
	equivalent := ptr(admissionregistrationv1.Equivalent)
	everything := &metav1.LabelSelector{}
	badValue := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "key", Operator: "In", Values: strs("bad value")}}}
	deploymentsV1 := attrs(gvk("apps", "v1", "Deployment"), gvr("apps", "v1", "deployments"), "")
	scaleV1 := attrs(gvk("autoscaling", "v1", "Scale"), gvr("apps", "v1", "deployments"), "scale")
	examplePod := attrs(gvk("example.apiserver.k8s.io", "v1", "Pod"), gvr("example.apiserver.k8s.io", "v1", "pods"), "")
	examplePod.Object = &corev1.Pod{}
	threeDeploymentRules := []admissionregistrationv1.NamedRuleWithOperations{
		rule(strs("extensions"), strs("v1beta1"), strs("deployments", "deployments/scale")),
		rule(strs("apps"), strs("v1beta1"), strs("deployments", "deployments/scale")),
		rule(strs("apps"), strs("v1"), strs("deployments", "deployments/scale")),
	}

	tests := []struct {
		name    string
		mr      *admissionregistrationv1.MatchResources
		attrs   *Attributes
		want    Result
		wantErr string
	}{
		{
			name:  "nil object selector matches nothing",
			mr:    &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{}},
			attrs: deploymentsV1,
		},
		{
			name:  "wildcard rule, match as requested",
			mr:    &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs("*"), strs("*"), strs("*"))}},
			attrs: deploymentsV1,
			want:  Result{Matched: true, Resource: gvr("apps", "v1", "deployments"), Kind: gvk("apps", "v1", "Deployment")},
		},
		{
			name: "specific rules, prefer exact match",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, MatchPolicy: equivalent, ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				rule(strs("extensions"), strs("v1beta1"), strs("deployments")),
				rule(strs("apps"), strs("v1beta1"), strs("deployments")),
				rule(strs("apps"), strs("v1"), strs("deployments")),
			}},
			attrs: deploymentsV1,
			want:  Result{Matched: true, Resource: gvr("apps", "v1", "deployments"), Kind: gvk("apps", "v1", "Deployment")},
		},
		{
			name: "specific rules, nil match policy misses",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				rule(strs("extensions"), strs("v1beta1"), strs("deployments")),
				rule(strs("apps"), strs("v1beta1"), strs("deployments")),
			}},
			attrs: deploymentsV1,
		},
		{
			name: "specific rules, exact match miss",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, MatchPolicy: exact, ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				rule(strs("extensions"), strs("v1beta1"), strs("deployments")),
				rule(strs("apps"), strs("v1beta1"), strs("deployments")),
			}},
			attrs: deploymentsV1,
		},
		{
			name: "specific rules, equivalent match, prefer extensions",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, MatchPolicy: equivalent, ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				rule(strs("extensions"), strs("v1beta1"), strs("deployments")),
				rule(strs("apps"), strs("v1beta1"), strs("deployments")),
			}},
			attrs: deploymentsV1,
			want:  Result{Matched: true, Resource: gvr("extensions", "v1beta1", "deployments"), Kind: gvk("extensions", "v1beta1", "Deployment")},
		},
		{
			name: "specific rules, equivalent match, prefer apps",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, MatchPolicy: equivalent, ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				rule(strs("apps"), strs("v1beta1"), strs("deployments")),
				rule(strs("extensions"), strs("v1beta1"), strs("deployments")),
			}},
			attrs: deploymentsV1,
			want:  Result{Matched: true, Resource: gvr("apps", "v1beta1", "deployments"), Kind: gvk("apps", "v1beta1", "Deployment")},
		},
		{
			name:  "specific rules, subresource prefer exact match",
			mr:    &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, MatchPolicy: equivalent, ResourceRules: threeDeploymentRules},
			attrs: scaleV1,
			want:  Result{Matched: true, Resource: gvr("apps", "v1", "deployments"), Kind: gvk("autoscaling", "v1", "Scale")},
		},
		{
			name:  "specific rules, subresource match miss",
			mr:    &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, ResourceRules: threeDeploymentRules[:2]},
			attrs: scaleV1,
		},
		{
			name:  "specific rules, subresource exact match miss",
			mr:    &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, MatchPolicy: exact, ResourceRules: threeDeploymentRules[:2]},
			attrs: scaleV1,
		},
		{
			name:  "specific rules, subresource equivalent match, prefer extensions",
			mr:    &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, MatchPolicy: equivalent, ResourceRules: threeDeploymentRules[:2]},
			attrs: scaleV1,
			want:  Result{Matched: true, Resource: gvr("extensions", "v1beta1", "deployments"), Kind: gvk("extensions", "v1beta1", "Scale")},
		},
		{
			name: "specific rules, subresource equivalent match, prefer apps",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, MatchPolicy: equivalent, ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				threeDeploymentRules[1], threeDeploymentRules[0],
			}},
			attrs: scaleV1,
			want:  Result{Matched: true, Resource: gvr("apps", "v1beta1", "deployments"), Kind: gvk("apps", "v1beta1", "Scale")},
		},
		{
			name: "specific rules, prefer exact match and name match",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				rule(strs("apps"), strs("v1"), strs("deployments"), "name"),
			}},
			attrs: attrs(gvk("autoscaling", "v1", "Scale"), gvr("apps", "v1", "deployments"), ""),
			want:  Result{Matched: true, Resource: gvr("apps", "v1", "deployments"), Kind: gvk("autoscaling", "v1", "Scale")},
		},
		{
			name: "specific rules, prefer exact match and name match miss",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				rule(strs("apps"), strs("v1"), strs("deployments"), "wrong-name"),
			}},
			attrs: attrs(gvk("autoscaling", "v1", "Scale"), gvr("apps", "v1", "deployments"), ""),
		},
		{
			name: "specific rules, subresource equivalent match and name match",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, MatchPolicy: equivalent, ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				rule(strs("apps"), strs("v1"), strs("deployments", "deployments/scale"), "name"),
			}},
			attrs: attrs(gvk("autoscaling", "v1", "Scale"), gvr("extensions", "v1beta1", "deployments"), "scale"),
			want:  Result{Matched: true, Resource: gvr("apps", "v1", "deployments"), Kind: gvk("autoscaling", "v1", "Scale")},
		},
		{
			name: "specific rules, subresource equivalent match and name match miss",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, MatchPolicy: equivalent, ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				rule(strs("apps"), strs("v1"), strs("deployments", "deployments/scale"), "wrong-name"),
			}},
			attrs: attrs(gvk("autoscaling", "v1", "Scale"), gvr("extensions", "v1beta1", "deployments"), "scale"),
		},
		{
			name: "exclude resource match on miss",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything,
				ResourceRules:        []admissionregistrationv1.NamedRuleWithOperations{rule(strs("*"), strs("*"), strs("*"))},
				ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs("extensions"), strs("v1beta1"), strs("deployments"))},
			},
			attrs: attrs(gvk("autoscaling", "v1", "Scale"), gvr("apps", "v1", "deployments"), ""),
			want:  Result{Matched: true, Resource: gvr("apps", "v1", "deployments"), Kind: gvk("autoscaling", "v1", "Scale")},
		},
		{
			name: "exclude resource miss on match",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything,
				ResourceRules:        []admissionregistrationv1.NamedRuleWithOperations{rule(strs("*"), strs("*"), strs("*"))},
				ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs("extensions"), strs("v1beta1"), strs("deployments"))},
			},
			attrs: attrs(gvk("autoscaling", "v1", "Scale"), gvr("extensions", "v1beta1", "deployments"), ""),
		},
		{
			name: "exclude through an equivalent resource",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, MatchPolicy: equivalent,
				ResourceRules:        []admissionregistrationv1.NamedRuleWithOperations{rule(strs("*"), strs("*"), strs("*"))},
				ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs("extensions"), strs("v1beta1"), strs("deployments"))},
			},
			attrs: deploymentsV1,
		},
		{
			name: "exclude by name",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything,
				ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs("apps"), strs("v1"), strs("deployments"), "name")},
			},
			attrs: deploymentsV1,
		},
		{
			name: "exclude by other name does not exclude",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything,
				ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs("apps"), strs("v1"), strs("deployments"), "other")},
			},
			attrs: deploymentsV1,
			want:  Result{Matched: true, Resource: gvr("apps", "v1", "deployments"), Kind: gvk("apps", "v1", "Deployment")},
		},
		{
			name: "treat empty ResourceRules as match",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything,
				ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs("extensions"), strs("v1beta1"), strs("deployments"))},
			},
			attrs: attrs(gvk("autoscaling", "v1", "Scale"), gvr("apps", "v1", "deployments"), ""),
			want:  Result{Matched: true, Resource: gvr("apps", "v1", "deployments"), Kind: gvk("autoscaling", "v1", "Scale")},
		},
		{
			name:  "treat non-empty ResourceRules as no match",
			mr:    &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{}}},
			attrs: attrs(gvk("autoscaling", "v1", "Scale"), gvr("apps", "v1", "deployments"), ""),
		},
		{
			name: "equivalent match with unknown kind errors",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, MatchPolicy: equivalent,
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs("example.com"), strs("v2"), strs("widgets"), "other")},
			},
			attrs:   attrs(gvk("example.com", "v1", "Widget"), gvr("example.com", "v1", "widgets"), ""),
			wantErr: "unable to convert to example.com/v2, Resource=widgets: unknown kind",
		},
		{
			name: "equivalent exclude with unknown kind errors even when include rules miss",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything, MatchPolicy: equivalent,
				ResourceRules:        []admissionregistrationv1.NamedRuleWithOperations{rule(strs("apps"), strs("v1"), strs("deployments"))},
				ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs("example.com"), strs("v2"), strs("widgets"))},
			},
			attrs:   attrs(gvk("example.com", "v1", "Widget"), gvr("example.com", "v1", "widgets"), ""),
			wantErr: "unable to convert to example.com/v2, Resource=widgets: unknown kind",
		},
		{
			name: "unknown kind error hidden by a non-matching object selector",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}, MatchPolicy: equivalent,
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs("example.com"), strs("v2"), strs("widgets"))},
			},
			attrs: attrs(gvk("example.com", "v1", "Widget"), gvr("example.com", "v1", "widgets"), ""),
		},
		{
			name: "erroring namespace selector on otherwise non-matching rule doesn't error",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "key ", Operator: "In", Values: strs("bad value")}}}, ObjectSelector: everything,
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs("*"), strs("*"), strs("deployments"))},
			},
			attrs: examplePod,
		},
		{
			name: "erroring namespace selector on otherwise matching rule errors",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: badValue, ObjectSelector: everything,
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs("*"), strs("*"), strs("pods"))},
			},
			attrs:   examplePod,
			wantErr: "bad value",
		},
		{
			name: "erroring object selector on otherwise non-matching rule doesn't error",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: badValue,
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs("*"), strs("*"), strs("deployments"))},
			},
			attrs: examplePod,
		},
		{
			name: "erroring object selector on otherwise matching rule errors",
			mr: &admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: badValue,
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs("*"), strs("*"), strs("pods"))},
			},
			attrs:   examplePod,
			wantErr: "bad value",
		},
	}
	opts := Options{Resources: testMapper()}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Match(t.Context(), tc.mr, tc.attrs, opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Match() error = %v, want error containing %q", err, tc.wantErr)
				}
				if got != (Result{}) {
					t.Errorf("Match() = %+v with error, want zero Result", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Match() error = %v, want nil", err)
			}
			if got != tc.want {
				t.Errorf("Match() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestMatchEquivalentWithoutMapper checks that a nil mapper turns
// Equivalent into Exact.
func TestMatchEquivalentWithoutMapper(t *testing.T) {
	t.Parallel()
	mr := &admissionregistrationv1.MatchResources{
		NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
		MatchPolicy:   ptr(admissionregistrationv1.Equivalent),
		ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs("extensions"), strs("v1beta1"), strs("deployments"))},
	}
	a := attrs(gvk("apps", "v1", "Deployment"), gvr("apps", "v1", "deployments"), "")
	got, err := Match(t.Context(), mr, a, Options{})
	if err != nil || got.Matched {
		t.Errorf("Match() = %+v, %v, want no match", got, err)
	}
}

// TestMatchNamespaceSelector mirrors upstream namespace/matcher_test.go and
// the namespaceSelector rows of spec §4.4.
func TestMatchNamespaceSelector(t *testing.T) {
	t.Parallel()
	runlevel1 := namespace("1", map[string]string{"runlevel": "1"})
	runlevel2 := namespace("2", map[string]string{"runlevel": "2"})
	sel1 := &metav1.LabelSelector{MatchLabels: map[string]string{"runlevel": "1"}}
	sel2 := &metav1.LabelSelector{MatchLabels: map[string]string{"runlevel": "2"}}
	nsRes := gvr("", "v1", "namespaces")
	nsKind := gvk("", "v1", "Namespace")
	unstructuredNS := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": "2", "labels": map[string]any{"runlevel": "2"}},
	}}

	tests := []struct {
		name      string
		sel       *metav1.LabelSelector
		attrs     *Attributes
		getter    NamespaceGetter
		want      bool
		wantErr   string
		wantCode  int32 // HTTP code of the returned APIStatus, 0 for none
		wantCalls int64
	}{
		{
			name:  "create namespace uses labels of the incoming object",
			sel:   sel2,
			attrs: &Attributes{Operation: "CREATE", Resource: nsRes, Kind: nsKind, Name: "2", Namespace: "2", Object: runlevel2},
			want:  true,
		},
		{
			name:  "create namespace from unstructured object",
			sel:   sel2,
			attrs: &Attributes{Operation: "CREATE", Resource: nsRes, Kind: nsKind, Name: "2", Namespace: "2", Object: unstructuredNS},
			want:  true,
		},
		{
			name:  "update namespace uses labels of the new object",
			sel:   sel1,
			attrs: &Attributes{Operation: "UPDATE", Resource: nsRes, Kind: nsKind, Name: "1", Namespace: "1", Object: runlevel2, OldObject: runlevel1},
			want:  false,
		},
		{
			name:      "delete namespace uses the stored namespace",
			sel:       sel1,
			attrs:     &Attributes{Operation: "DELETE", Resource: nsRes, Kind: nsKind, Name: "1", Namespace: "1", Object: runlevel2},
			want:      true,
			wantCalls: 1,
		},
		{
			name:      "namespace subresource uses the stored namespace",
			sel:       sel1,
			attrs:     &Attributes{Operation: "CREATE", Resource: nsRes, SubResource: "finalize", Kind: nsKind, Name: "1", Namespace: "1"},
			want:      true,
			wantCalls: 1,
		},
		{
			name:     "create namespace without object is an internal error",
			sel:      sel1,
			attrs:    &Attributes{Operation: "CREATE", Resource: nsRes, Kind: nsKind, Name: "1", Namespace: "1"},
			wantErr:  "Internal error occurred: object does not implement the Object interfaces",
			wantCode: 500,
		},
		{
			name:     "create namespace with typed nil object is an internal error",
			sel:      sel1,
			attrs:    &Attributes{Operation: "CREATE", Resource: nsRes, Kind: nsKind, Name: "1", Namespace: "1", Object: (*corev1.Namespace)(nil)},
			wantErr:  "Internal error occurred: object does not implement the Object interfaces",
			wantCode: 500,
		},
		{
			name:      "pod uses its namespace",
			sel:       sel1,
			attrs:     &Attributes{Operation: "CREATE", Resource: gvr("", "v1", "pods"), Name: "p", Namespace: "1"},
			want:      true,
			wantCalls: 1,
		},
		{
			name:      "pod in namespace with other labels",
			sel:       sel2,
			attrs:     &Attributes{Operation: "CREATE", Resource: gvr("", "v1", "pods"), Name: "p", Namespace: "1"},
			want:      false,
			wantCalls: 1,
		},
		{
			name:  "cluster-scoped resource always matches, selector not parsed",
			sel:   &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}},
			attrs: &Attributes{Operation: "CREATE", Resource: gvr("", "v1", "nodes"), Name: "n"},
			want:  true,
		},
		{
			name:  "empty selector matches without lookup",
			sel:   &metav1.LabelSelector{},
			attrs: &Attributes{Operation: "CREATE", Resource: gvr("", "v1", "pods"), Name: "p", Namespace: "missing"},
			want:  true,
		},
		{
			name:      "missing namespace is a 404",
			sel:       sel1,
			attrs:     &Attributes{Operation: "CREATE", Resource: gvr("", "v1", "pods"), Name: "p", Namespace: "missing"},
			wantErr:   `namespaces "missing" not found`,
			wantCode:  404,
			wantCalls: 1,
		},
		{
			name:     "nil getter is a 404",
			sel:      sel1,
			attrs:    &Attributes{Operation: "CREATE", Resource: gvr("", "v1", "pods"), Name: "p", Namespace: "1"},
			getter:   nilGetter{},
			wantErr:  `namespaces "1" not found`,
			wantCode: 404,
		},
		{
			name:  "getter returning nil, nil is a 404",
			sel:   sel1,
			attrs: &Attributes{Operation: "CREATE", Resource: gvr("", "v1", "pods"), Name: "p", Namespace: "1"},
			getter: NamespaceGetterFunc(func(context.Context, string) (*corev1.Namespace, error) {
				return nil, nil
			}),
			wantErr:  `namespaces "1" not found`,
			wantCode: 404,
		},
		{
			name:  "other lookup errors are internal errors",
			sel:   sel1,
			attrs: &Attributes{Operation: "CREATE", Resource: gvr("", "v1", "pods"), Name: "p", Namespace: "1"},
			getter: NamespaceGetterFunc(func(context.Context, string) (*corev1.Namespace, error) {
				return nil, errors.New("boom")
			}),
			wantErr:  "Internal error occurred: boom",
			wantCode: 500,
		},
		{
			name:  "wrapped NotFound is an internal error",
			sel:   sel1,
			attrs: &Attributes{Operation: "CREATE", Resource: gvr("", "v1", "pods"), Name: "p", Namespace: "1"},
			getter: NamespaceGetterFunc(func(_ context.Context, name string) (*corev1.Namespace, error) {
				return nil, fmt.Errorf("cache: %w", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name))
			}),
			wantErr:  `Internal error occurred: cache: namespaces "1" not found`,
			wantCode: 500,
		},
		{
			name:     "selector parse error is an internal error",
			sel:      &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}}},
			attrs:    &Attributes{Operation: "CREATE", Resource: gvr("", "v1", "pods"), Name: "p", Namespace: "1"},
			wantErr:  `Internal error occurred: "Bogus" is not a valid label selector operator`,
			wantCode: 500,
		},
		{
			name:      "nil selector selects nothing",
			sel:       nil,
			attrs:     &Attributes{Operation: "CREATE", Resource: gvr("", "v1", "pods"), Name: "p", Namespace: "1"},
			want:      false,
			wantCalls: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := newNamespaces(runlevel1)
			var g NamespaceGetter = store
			if tc.getter != nil {
				g = tc.getter
			}
			if _, ok := g.(nilGetter); ok {
				g = nil
			}
			mr := &admissionregistrationv1.MatchResources{NamespaceSelector: tc.sel, ObjectSelector: &metav1.LabelSelector{}}
			got, err := Match(t.Context(), mr, tc.attrs, Options{Namespaces: g})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Match() error = %v, want %q", err, tc.wantErr)
				}
				var st apierrors.APIStatus
				if !errors.As(err, &st) || st.Status().Code != tc.wantCode {
					t.Errorf("Match() error = %#v, want APIStatus with code %d", err, tc.wantCode)
				}
			} else if err != nil {
				t.Fatalf("Match() error = %v, want nil", err)
			}
			if got.Matched != tc.want {
				t.Errorf("Match().Matched = %v, want %v", got.Matched, tc.want)
			}
			if calls := store.calls.Load(); calls != tc.wantCalls {
				t.Errorf("namespace lookups = %d, want %d", calls, tc.wantCalls)
			}
		})
	}
}

// nilGetter marks a test case that runs with Options.Namespaces == nil.
type nilGetter struct{}

func (nilGetter) GetNamespace(context.Context, string) (*corev1.Namespace, error) {
	return nil, errors.New("unreachable")
}

// TestMatchNoLookupWhenRulesMiss checks that a policy whose rules reject
// the request never looks up the namespace.
func TestMatchNoLookupWhenRulesMiss(t *testing.T) {
	t.Parallel()
	store := newNamespaces()
	mr := &admissionregistrationv1.MatchResources{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
		ObjectSelector:    &metav1.LabelSelector{},
		ResourceRules:     []admissionregistrationv1.NamedRuleWithOperations{rule(strs("apps"), strs("*"), strs("deployments"))},
	}
	a := &Attributes{Operation: "CREATE", Resource: gvr("", "v1", "pods"), Name: "p", Namespace: "missing"}
	got, err := Match(t.Context(), mr, a, Options{Namespaces: store})
	if err != nil || got.Matched {
		t.Errorf("Match() = %+v, %v, want no match and no error", got, err)
	}
	if n := store.calls.Load(); n != 0 {
		t.Errorf("namespace lookups = %d, want 0", n)
	}
}

// TestMatchObjectSelector mirrors upstream object/matcher_test.go.
func TestMatchObjectSelector(t *testing.T) {
	t.Parallel()
	node := func(level string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"runlevel": level}}}
	}
	notLevel1 := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "runlevel", Operator: metav1.LabelSelectorOpNotIn, Values: strs("1")}}}
	tests := []struct {
		name       string
		sel        *metav1.LabelSelector
		obj, old   runtime.Object
		want       bool
		wantErrSub string
	}{
		{name: "empty object selector matches everything", sel: &metav1.LabelSelector{}, want: true},
		{name: "matches new object", sel: notLevel1, obj: node("2"), want: true},
		{name: "matches old object", sel: notLevel1, old: node("2"), want: true},
		{name: "new object selected is enough", sel: notLevel1, obj: node("2"), old: node("1"), want: true},
		{name: "old object selected is enough", sel: notLevel1, obj: node("1"), old: node("2"), want: true},
		{name: "does not match new object", sel: notLevel1, obj: node("1")},
		{name: "does not match old object", sel: notLevel1, old: node("1")},
		{name: "nil objects never match", sel: notLevel1},
		{name: "typed nil never matches", sel: notLevel1, obj: (*corev1.Node)(nil)},
		{name: "does not match object without metadata", sel: notLevel1, obj: &corev1.NodeProxyOptions{}},
		{name: "empty selector matches object without metadata", sel: &metav1.LabelSelector{}, obj: &corev1.NodeProxyOptions{}, want: true},
		{name: "nil selector matches nothing", sel: nil, obj: node("2")},
		{
			name: "unstructured labels",
			sel:  &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			obj: &unstructured.Unstructured{Object: map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
			}},
			want: true,
		},
		{
			name:       "invalid label value",
			sel:        &metav1.LabelSelector{MatchLabels: map[string]string{"a": "bad value"}},
			obj:        node("2"),
			wantErrSub: "Internal error occurred: values[0][a]: Invalid value: \"bad value\"",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mr := &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: tc.sel}
			a := &Attributes{Operation: "CREATE", Resource: gvr("", "v1", "nodes"), Name: "name", Object: tc.obj, OldObject: tc.old}
			got, err := Match(t.Context(), mr, a, Options{})
			if tc.wantErrSub != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErrSub) {
					t.Fatalf("Match() error = %v, want prefix %q", err, tc.wantErrSub)
				}
				return
			}
			if err != nil {
				t.Fatalf("Match() error = %v, want nil", err)
			}
			if got.Matched != tc.want {
				t.Errorf("Match().Matched = %v, want %v", got.Matched, tc.want)
			}
		})
	}
}

// TestSelectorDeterministicError checks that several invalid matchLabels
// always report the same (first by key) error.
func TestSelectorDeterministicError(t *testing.T) {
	t.Parallel()
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"b": "bad value", "a": "bad value", "c": "bad value"}}
	want := ""
	for i := range 20 {
		_, err := selectorFor(sel)
		if err == nil {
			t.Fatalf("selectorFor() error = nil, want error")
		}
		if i == 0 {
			want = err.Error()
			if !strings.Contains(want, "[a]") {
				t.Fatalf("selectorFor() error = %q, want the error for key a", want)
			}
		} else if err.Error() != want {
			t.Fatalf("selectorFor() error = %q, want %q", err, want)
		}
	}
}

func TestMatchPolicy(t *testing.T) {
	t.Parallel()
	everything := &metav1.LabelSelector{}
	policy := func(mr *admissionregistrationv1.MatchResources) *admissionregistrationv1.ValidatingAdmissionPolicy {
		return &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: mr}}
	}
	a := attrs(gvk("apps", "v1", "Deployment"), gvr("apps", "v1", "deployments"), "")
	tests := []struct {
		name    string
		policy  *admissionregistrationv1.ValidatingAdmissionPolicy
		want    Result
		wantErr string
	}{
		{name: "nil policy", policy: nil, wantErr: "matching: nil ValidatingAdmissionPolicy"},
		{name: "no match constraints", policy: policy(nil), wantErr: "policy contained no match constraints, a required field"},
		{
			name:    "nil namespace selector",
			policy:  policy(&admissionregistrationv1.MatchResources{}),
			wantErr: "a nil namespace selector was passed, please ensure selectors are initialized properly",
		},
		{
			name:    "nil object selector",
			policy:  policy(&admissionregistrationv1.MatchResources{NamespaceSelector: everything}),
			wantErr: "a nil object selector was passed, please ensure selectors are initialized properly",
		},
		{
			name: "nil selector error even when rules do not match",
			policy: policy(&admissionregistrationv1.MatchResources{NamespaceSelector: everything,
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs("nope"), strs("*"), strs("*"))}}),
			wantErr: "a nil object selector was passed, please ensure selectors are initialized properly",
		},
		{
			name:   "matches",
			policy: policy(&admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything}),
			want:   Result{Matched: true, Resource: a.Resource, Kind: a.Kind},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := MatchPolicy(t.Context(), tc.policy, a, Options{})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("MatchPolicy() error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("MatchPolicy() = %+v, %v, want %+v, nil", got, err, tc.want)
			}
		})
	}
}

func TestMatchBinding(t *testing.T) {
	t.Parallel()
	everything := &metav1.LabelSelector{}
	binding := func(mr *admissionregistrationv1.MatchResources) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
		return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{MatchResources: mr}}
	}
	a := attrs(gvk("apps", "v1", "Deployment"), gvr("apps", "v1", "deployments"), "")
	tests := []struct {
		name    string
		binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
		want    bool
		wantErr string
	}{
		{name: "nil binding", binding: nil, wantErr: "matching: nil ValidatingAdmissionPolicyBinding"},
		{name: "nil match resources matches", binding: binding(nil), want: true},
		{
			name:    "nil namespace selector",
			binding: binding(&admissionregistrationv1.MatchResources{ObjectSelector: everything}),
			wantErr: "a nil namespace selector was passed, please ensure selectors are initialized properly",
		},
		{
			name:    "nil object selector",
			binding: binding(&admissionregistrationv1.MatchResources{NamespaceSelector: everything}),
			wantErr: "a nil object selector was passed, please ensure selectors are initialized properly",
		},
		{
			name:    "empty rules do not constrain",
			binding: binding(&admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything}),
			want:    true,
		},
		{
			name: "rules for other resources",
			binding: binding(&admissionregistrationv1.MatchResources{NamespaceSelector: everything, ObjectSelector: everything,
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs(""), strs("v1"), strs("pods"))}}),
			want: false,
		},
		{
			name: "namespace lookup error surfaces",
			binding: binding(&admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}, ObjectSelector: everything,
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(strs("apps"), strs("v1"), strs("deployments"))}}),
			wantErr: `namespaces "ns" not found`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := MatchBinding(t.Context(), tc.binding, a, Options{})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("MatchBinding() error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("MatchBinding() = %v, %v, want %v, nil", got, err, tc.want)
			}
		})
	}
}

func TestMatchNilArguments(t *testing.T) {
	t.Parallel()
	if _, err := Match(t.Context(), nil, &Attributes{}, Options{}); err == nil {
		t.Errorf("Match(nil MatchResources) error = nil, want error")
	}
	if _, err := Match(t.Context(), &admissionregistrationv1.MatchResources{}, nil, Options{}); err == nil {
		t.Errorf("Match(nil Attributes) error = nil, want error")
	}
}

func TestExempt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		gr   schema.GroupResource
		want bool
	}{
		{schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}, true},
		{schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}, true},
		{schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicies"}, true},
		{schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicybindings"}, true},
		{schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}, false},
		{schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}, false},
		{schema.GroupResource{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}, true},
		{schema.GroupResource{Group: "authentication.k8s.io", Resource: "tokenreviews"}, true},
		{schema.GroupResource{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}, true},
		{schema.GroupResource{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}, true},
		{schema.GroupResource{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}, true},
		{schema.GroupResource{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}, true},
		{schema.GroupResource{Group: "", Resource: "tokenreviews"}, false},
		{schema.GroupResource{Group: "", Resource: "bindings"}, false},
		{schema.GroupResource{Group: "", Resource: "pods"}, false},
		{schema.GroupResource{Group: "", Resource: "serviceaccounts"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.gr.String(), func(t *testing.T) {
			t.Parallel()
			if got := Exempt(tc.gr); got != tc.want {
				t.Errorf("Exempt(%v) = %v, want %v", tc.gr, got, tc.want)
			}
		})
	}
}
