package params_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/params"
)

var (
	limitKind        = &admissionregistrationv1.ParamKind{APIVersion: "rules.example.com/v1", Kind: "ReplicaLimit"}
	limitGVK         = schema.GroupVersionKind{Group: "rules.example.com", Version: "v1", Kind: "ReplicaLimit"}
	clusterLimitKind = &admissionregistrationv1.ParamKind{APIVersion: "rules.example.com/v1", Kind: "ClusterLimit"}
	clusterLimitGVK  = schema.GroupVersionKind{Group: "rules.example.com", Version: "v1", Kind: "ClusterLimit"}

	deny  = ptr(admissionregistrationv1.DenyAction)
	allow = ptr(admissionregistrationv1.AllowAction)
)

func ptr[T any](v T) *T { return &v }

// obj builds an unstructured parameter object of the given kind.
func obj(gvk schema.GroupVersionKind, namespace, name string, lbls map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	if lbls != nil {
		u.SetLabels(lbls)
	}
	return u
}

// names renders resolved params as "ns/name" ("<nil>" for a nil element) so
// that results compare and print compactly.
func names(objs []runtime.Object) []string {
	if objs == nil {
		return nil
	}
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		if o == nil {
			out = append(out, "<nil>")
			continue
		}
		m, err := meta.Accessor(o)
		if err != nil {
			out = append(out, fmt.Sprintf("<%T>", o))
			continue
		}
		out = append(out, m.GetNamespace()+"/"+m.GetName())
	}
	return out
}

func newStore(t *testing.T) *params.Static {
	t.Helper()
	s, err := params.NewStatic(
		obj(limitGVK, "default", "limit", map[string]string{"tier": "prod"}),
		obj(limitGVK, "team-a", "limit", map[string]string{"tier": "prod"}),
		obj(limitGVK, "team-a", "b-small", map[string]string{"tier": "prod"}),
		obj(limitGVK, "team-a", "a-tiny", map[string]string{"tier": "prod"}),
		obj(limitGVK, "team-a", "unlabelled", nil),
		obj(limitGVK, "team-b", "elsewhere", map[string]string{"tier": "prod"}),
		obj(clusterLimitGVK, "", "global", map[string]string{"tier": "prod"}),
		obj(clusterLimitGVK, "", "other", map[string]string{"tier": "dev"}),
	)
	if err != nil {
		t.Fatalf("NewStatic() error = %v", err)
	}
	return s
}

func TestResolve(t *testing.T) {
	t.Parallel()
	store := newStore(t)
	everything := &metav1.LabelSelector{}
	prod := &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "prod"}}

	tests := []struct {
		name    string
		src     params.Source // nil: the shared store
		noSrc   bool          // use a nil Source
		req     params.Request
		want    []string // nil with wantErr
		wantErr string   // exact error text
		wantIs  error    // sentinel, if any
	}{
		{
			name: "no paramKind evaluates once with null params",
			req:  params.Request{ParamRef: &admissionregistrationv1.ParamRef{Name: "limit", Namespace: "x"}, Namespaced: true},
			want: []string{"<nil>"},
		},
		{
			name: "no paramKind ignores even an invalid paramRef",
			req:  params.Request{ParamRef: &admissionregistrationv1.ParamRef{Name: "a", Selector: everything}},
			want: []string{"<nil>"},
		},
		{
			name: "no paramRef evaluates once with null params",
			req:  params.Request{ParamKind: limitKind, Namespaced: true},
			want: []string{"<nil>"},
		},
		{
			name: "name in the request namespace",
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "limit"}},
			want: []string{"team-a/limit"},
		},
		{
			name: "paramRef namespace wins over request namespace",
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "limit", Namespace: "default"}},
			want: []string{"default/limit"},
		},
		{
			name: "paramRef namespace serves cluster-scoped requests",
			req: params.Request{ParamKind: limitKind, Namespaced: true,
				ParamRef: &admissionregistrationv1.ParamRef{Name: "limit", Namespace: "default"}},
			want: []string{"default/limit"},
		},
		{
			name: "namespaced kind without any namespace",
			req: params.Request{ParamKind: limitKind, Namespaced: true,
				ParamRef: &admissionregistrationv1.ParamRef{Name: "limit", ParameterNotFoundAction: deny}},
			wantErr: "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources",
			wantIs:  params.ErrNamespaceRequired,
		},
		{
			name: "namespace rule is checked before name and selector",
			req: params.Request{ParamKind: limitKind, Namespaced: true,
				ParamRef: &admissionregistrationv1.ParamRef{Name: "limit", Selector: everything}},
			wantErr: "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources",
			wantIs:  params.ErrNamespaceRequired,
		},
		{
			name: "namespace request looks in its own namespace",
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-c",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "limit", ParameterNotFoundAction: deny}},
			wantErr: "no params found for policy binding with `Deny` parameterNotFoundAction",
			wantIs:  params.ErrParamNotFound,
		},
		{
			name: "cluster-scoped kind by name",
			req: params.Request{ParamKind: clusterLimitKind, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "global"}},
			want: []string{"/global"},
		},
		{
			name: "cluster-scoped kind with paramRef namespace",
			req: params.Request{ParamKind: clusterLimitKind, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "global", Namespace: "default", ParameterNotFoundAction: deny}},
			wantErr: "paramRef.namespace must not be provided for a cluster-scoped `paramKind`",
			wantIs:  params.ErrNamespaceNotAllowed,
		},
		{
			name: "cluster-scoped namespace rule is checked before name and selector",
			req: params.Request{ParamKind: clusterLimitKind,
				ParamRef: &admissionregistrationv1.ParamRef{Namespace: "default"}},
			wantErr: "paramRef.namespace must not be provided for a cluster-scoped `paramKind`",
			wantIs:  params.ErrNamespaceNotAllowed,
		},
		{
			name: "name and selector",
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "limit", Selector: prod}},
			wantErr: "paramRef.name and paramRef.selector are mutually exclusive",
			wantIs:  params.ErrNameAndSelector,
		},
		{
			name: "neither name nor selector",
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{ParameterNotFoundAction: allow}},
			wantErr: "one of name or selector must be provided",
			wantIs:  params.ErrNoNameOrSelector,
		},
		{
			name: "not found with Deny",
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "missing", ParameterNotFoundAction: deny}},
			wantErr: "no params found for policy binding with `Deny` parameterNotFoundAction",
			wantIs:  params.ErrParamNotFound,
		},
		{
			name: "not found with Allow",
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "missing", ParameterNotFoundAction: allow}},
			want: []string{},
		},
		{
			name: "not found without action",
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "missing"}},
			want: []string{},
		},
		{
			name: "name in another namespace is not found",
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "elsewhere", ParameterNotFoundAction: deny}},
			wantErr: "no params found for policy binding with `Deny` parameterNotFoundAction",
			wantIs:  params.ErrParamNotFound,
		},
		{
			name: "kind must match exactly",
			req: params.Request{ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "rules.example.com/v2", Kind: "ReplicaLimit"},
				Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "limit"}},
			want: []string{},
		},
		{
			name: "empty selector selects all in namespace, sorted by name",
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Selector: everything, ParameterNotFoundAction: deny}},
			want: []string{"team-a/a-tiny", "team-a/b-small", "team-a/limit", "team-a/unlabelled"},
		},
		{
			name: "label selector in paramRef namespace",
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Selector: prod, Namespace: "team-b"}},
			want: []string{"team-b/elsewhere"},
		},
		{
			name: "match expressions",
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpDoesNotExist}},
				}}},
			want: []string{"team-a/unlabelled"},
		},
		{
			name: "selector matching nothing with Deny",
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "dev"}},
					ParameterNotFoundAction: deny}},
			wantErr: "no params found for policy binding with `Deny` parameterNotFoundAction",
			wantIs:  params.ErrParamNotFound,
		},
		{
			name: "cluster-scoped kind selector is cluster-wide",
			req: params.Request{ParamKind: clusterLimitKind, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Selector: everything}},
			want: []string{"/global", "/other"},
		},
		{
			name: "invalid selector operator",
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Bogus"}},
				}}},
			wantErr: `"Bogus" is not a valid label selector operator`,
		},
		{
			name: "invalid selector values",
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn}},
				}}},
			wantErr: "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
		},
		{
			name: "invalid paramKind apiVersion",
			req: params.Request{ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "a/b/c", Kind: "X"}, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "limit"}},
			wantErr: `invalid paramKind APIVersion "a/b/c": unexpected GroupVersion string: a/b/c`,
		},
		{
			name:  "nil source is an empty store",
			noSrc: true,
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "limit", ParameterNotFoundAction: deny}},
			wantErr: "no params found for policy binding with `Deny` parameterNotFoundAction",
			wantIs:  params.ErrParamNotFound,
		},
		{
			name:  "nil source with Allow",
			noSrc: true,
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Selector: everything, ParameterNotFoundAction: allow}},
			want: []string{},
		},
		{
			name: "NotFound error by name counts as not found",
			src: params.SourceFunc(func(context.Context, params.Query) ([]runtime.Object, error) {
				return nil, apierrors.NewNotFound(schema.GroupResource{Group: "rules.example.com", Resource: "replicalimits"}, "limit")
			}),
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "limit", ParameterNotFoundAction: allow}},
			want: []string{},
		},
		{
			name: "NotFound error by selector is an error",
			src: params.SourceFunc(func(context.Context, params.Query) ([]runtime.Object, error) {
				return nil, apierrors.NewNotFound(schema.GroupResource{Group: "rules.example.com", Resource: "replicalimits"}, "")
			}),
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Selector: everything, ParameterNotFoundAction: allow}},
			wantErr: `replicalimits.rules.example.com "" not found`,
		},
		{
			name: "source error is returned as is",
			src: params.SourceFunc(func(context.Context, params.Query) ([]runtime.Object, error) {
				return nil, errors.New("cache exploded")
			}),
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "limit", ParameterNotFoundAction: allow}},
			wantErr: "cache exploded",
		},
		{
			name: "source returning a nil object",
			src: params.SourceFunc(func(context.Context, params.Query) ([]runtime.Object, error) {
				return []runtime.Object{obj(limitGVK, "team-a", "x", nil), (*unstructured.Unstructured)(nil)}, nil
			}),
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Selector: prod}},
			wantErr: `params: source returned a nil object for rules.example.com/v1, Kind=ReplicaLimit selector "tier=prod" in namespace "team-a"`,
		},
		{
			name: "source returning two objects for a name",
			src: params.SourceFunc(func(context.Context, params.Query) ([]runtime.Object, error) {
				return []runtime.Object{obj(limitGVK, "team-a", "limit", nil), obj(limitGVK, "team-a", "limit", nil)}, nil
			}),
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "limit"}},
			wantErr: `params: source returned 2 objects for rules.example.com/v1, Kind=ReplicaLimit "team-a/limit", want at most one`,
		},
		{
			name: "unordered source results are sorted by namespace then name",
			src: params.SourceFunc(func(context.Context, params.Query) ([]runtime.Object, error) {
				return []runtime.Object{
					obj(clusterLimitGVK, "b", "a", nil),
					obj(clusterLimitGVK, "a", "b", nil),
					obj(clusterLimitGVK, "", "z", nil),
					obj(clusterLimitGVK, "a", "a", nil),
				}, nil
			}),
			req: params.Request{ParamKind: clusterLimitKind,
				ParamRef: &admissionregistrationv1.ParamRef{Selector: everything}},
			want: []string{"/z", "a/a", "a/b", "b/a"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var src params.Source = store
			if tc.src != nil {
				src = tc.src
			}
			if tc.noSrc {
				src = nil
			}
			got, err := params.Resolve(t.Context(), src, tc.req)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("Resolve() = %v, want error %q", names(got), tc.wantErr)
				}
				if err.Error() != tc.wantErr {
					t.Errorf("Resolve() error = %q, want %q", err.Error(), tc.wantErr)
				}
				if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
					t.Errorf("errors.Is(%v, %v) = false, want true", err, tc.wantIs)
				}
				if got != nil {
					t.Errorf("Resolve() = %v with error, want nil", names(got))
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve() error = %v, want nil", err)
			}
			if got == nil {
				t.Fatalf("Resolve() = nil slice, want non-nil")
			}
			if diff := cmp.Diff(tc.want, names(got)); diff != "" {
				t.Errorf("Resolve() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResolveQuery checks the exact query a Source receives.
func TestResolveQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  params.Request
		want string // Kind|Namespace|Name|Selector
	}{
		{
			name: "namespaced by name",
			req: params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "limit"}},
			want: "rules.example.com/v1, Kind=ReplicaLimit|team-a|limit|<nil>",
		},
		{
			name: "cluster-scoped by selector",
			req: params.Request{ParamKind: clusterLimitKind, RequestNamespace: "team-a",
				ParamRef: &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{
					MatchLabels:      map[string]string{"tier": "prod"},
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"b", "a"}}},
				}}},
			want: "rules.example.com/v1, Kind=ClusterLimit|||tier=prod,zone in (a,b)",
		},
		{
			name: "core group kind",
			req: params.Request{ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}, Namespaced: true,
				ParamRef: &admissionregistrationv1.ParamRef{Namespace: "policy-config", Selector: &metav1.LabelSelector{}}},
			want: "/v1, Kind=ConfigMap|policy-config||",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			src := params.SourceFunc(func(_ context.Context, q params.Query) ([]runtime.Object, error) {
				sel := "<nil>"
				if q.Selector != nil {
					sel = q.Selector.String()
				}
				got = append(got, strings.Join([]string{q.Kind.String(), q.Namespace, q.Name, sel}, "|"))
				return nil, nil
			})
			if _, err := params.Resolve(t.Context(), src, tc.req); err != nil {
				t.Fatalf("Resolve() error = %v", err)
			}
			if diff := cmp.Diff([]string{tc.want}, got); diff != "" {
				t.Errorf("queries mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResolveDoesNotModifySource checks that sorting works on a copy.
func TestResolveDoesNotModifySource(t *testing.T) {
	t.Parallel()
	served := []runtime.Object{obj(limitGVK, "ns", "b", nil), obj(limitGVK, "ns", "a", nil)}
	before := names(served)
	src := params.SourceFunc(func(context.Context, params.Query) ([]runtime.Object, error) { return served, nil })
	got, err := params.Resolve(t.Context(), src, params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "ns",
		ParamRef: &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{}}})
	if err != nil {
		t.Fatalf("Resolve() error = %v", err)
	}
	if diff := cmp.Diff([]string{"ns/a", "ns/b"}, names(got)); diff != "" {
		t.Errorf("Resolve() mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, names(served)); diff != "" {
		t.Errorf("source slice was reordered (-want +got):\n%s", diff)
	}
}

// TestResolveMatrix mirrors upstream's TestNamespaceParamRef: every mix of
// name/selector, namespace, scope and not-found action against a library of
// look-alike params, compared with a direct reading of the rules.
func TestResolveMatrix(t *testing.T) {
	t.Parallel()
	const (
		paramName = "param"
		matchNS   = "matching-ns"
		otherNS   = "other-ns"
	)
	matching := map[string]string{"match": "yes"}
	nonMatching := map[string]string{"match": "no"}
	other := map[string]string{"other": "yes"}

	var library []runtime.Object
	for i, lbls := range []map[string]string{nonMatching, matching, other, matching} {
		name := paramName
		if i > 0 {
			name = fmt.Sprintf("%s%d", paramName, i)
		}
		for _, ns := range []string{"default", matchNS, otherNS} {
			l := lbls
			if i == 3 && ns == "default" {
				l = other
			}
			library = append(library, obj(limitGVK, ns, name, l))
		}
	}
	for i, lbls := range []map[string]string{matching, nonMatching, other, matching, nonMatching, other} {
		name := paramName
		if i > 0 {
			name = fmt.Sprintf("%s%d", paramName, i)
		}
		library = append(library, obj(clusterLimitGVK, "", name, lbls))
	}
	store, err := params.NewStatic(library...)
	if err != nil {
		t.Fatalf("NewStatic() error = %v", err)
	}

	for _, cluster := range []bool{false, true} {
		for _, by := range []string{"name", "selector", "everything"} {
			for _, nsSet := range []bool{false, true} {
				for _, denyNotFound := range []bool{false, true} {
					for _, requestNS := range []string{otherNS, ""} {
						name := fmt.Sprintf("cluster=%v/by=%s/namespace=%v/deny=%v/request=%q", cluster, by, nsSet, denyNotFound, requestNS)
						t.Run(name, func(t *testing.T) {
							t.Parallel()
							kind, gvk := limitKind, limitGVK
							if cluster {
								kind, gvk = clusterLimitKind, clusterLimitGVK
							}
							ref := &admissionregistrationv1.ParamRef{ParameterNotFoundAction: allow}
							if denyNotFound {
								ref.ParameterNotFoundAction = deny
							}
							switch by {
							case "name":
								ref.Name = paramName
							case "selector":
								ref.Selector = metav1.SetAsLabelSelector(matching)
							default:
								ref.Selector = &metav1.LabelSelector{}
							}
							if nsSet {
								ref.Namespace = matchNS
							}
							got, err := params.Resolve(t.Context(), store, params.Request{
								ParamKind: kind, ParamRef: ref, Namespaced: !cluster, RequestNamespace: requestNS,
							})

							// The rules, read directly.
							var wantErr error
							var want []string
							switch {
							case cluster && nsSet:
								wantErr = params.ErrNamespaceNotAllowed
							case !cluster && !nsSet && requestNS == "":
								wantErr = params.ErrNamespaceRequired
							default:
								searchNS := ""
								if !cluster {
									searchNS = requestNS
									if nsSet {
										searchNS = matchNS
									}
								}
								want = []string{}
								for _, p := range library {
									u := p.(*unstructured.Unstructured)
									if u.GroupVersionKind() != gvk || u.GetNamespace() != searchNS {
										continue
									}
									if ref.Name != "" && u.GetName() != ref.Name {
										continue
									}
									if by == "selector" && u.GetLabels()["match"] != "yes" {
										continue
									}
									want = append(want, u.GetNamespace()+"/"+u.GetName())
								}
								slices.Sort(want)
								if len(want) == 0 && denyNotFound {
									want, wantErr = nil, params.ErrParamNotFound
								}
							}

							if !errors.Is(err, wantErr) || (err == nil) != (wantErr == nil) {
								t.Fatalf("Resolve() error = %v, want %v", err, wantErr)
							}
							if diff := cmp.Diff(want, names(got)); diff != "" {
								t.Errorf("Resolve() mismatch (-want +got):\n%s", diff)
							}
						})
					}
				}
			}
		}
	}
}

// TestResolveConcurrent runs Resolve against one Static from many goroutines
// (meaningful under -race).
func TestResolveConcurrent(t *testing.T) {
	t.Parallel()
	store := newStore(t)
	req := params.Request{ParamKind: limitKind, Namespaced: true, RequestNamespace: "team-a",
		ParamRef: &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "prod"}}}}
	want := []string{"team-a/a-tiny", "team-a/b-small", "team-a/limit"}
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for range 16 {
		wg.Go(func() {
			for range 100 {
				got, err := params.Resolve(t.Context(), store, req)
				if err != nil {
					errs <- err.Error()
					return
				}
				if diff := cmp.Diff(want, names(got)); diff != "" {
					errs <- diff
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent Resolve(): %s", e)
	}
}

func TestQueryString(t *testing.T) {
	t.Parallel()
	sel, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		q    params.Query
		want string
	}{
		{"namespaced name", params.Query{Kind: limitGVK, Namespace: "ns", Name: "n"}, `rules.example.com/v1, Kind=ReplicaLimit "ns/n"`},
		{"cluster name", params.Query{Kind: clusterLimitGVK, Name: "n"}, `rules.example.com/v1, Kind=ClusterLimit "n"`},
		{"selector", params.Query{Kind: clusterLimitGVK, Selector: sel}, `rules.example.com/v1, Kind=ClusterLimit selector "a=b"`},
		{"empty", params.Query{Kind: limitGVK}, `rules.example.com/v1, Kind=ReplicaLimit (no name or selector)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.q.String(); got != tc.want {
				t.Errorf("Query.String() = %q, want %q", got, tc.want)
			}
		})
	}
}
