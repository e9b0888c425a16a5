// Inputs of the CEL variables: object and oldObject per kind, params,
// namespaceObject and the authorizer values.

package policy

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/celenv/authz"
	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/internal/celvalue"
)

// versionedObjects are the request's objects converted to one kind, in the
// form CEL sees.
type versionedObjects struct {
	kind              schema.GroupVersionKind
	object, oldObject any
	err               error // preparing the CEL values failed
}

// versionedFor converts the request's objects to kind once per request.
func (st *requestState) versionedFor(kind schema.GroupVersionKind) (*versionedObjects, error) {
	if i := slices.IndexFunc(st.versioned, func(vo *versionedObjects) bool { return vo.kind == kind }); i >= 0 {
		vo := st.versioned[i]
		return vo, nil
	}
	var vo *versionedObjects
	if len(st.versioned) == 0 {
		// Most requests need one kind: it lives in st, allocating nothing.
		vo = &st.vo0
	} else {
		vo = new(versionedObjects)
	}
	*vo = versionedObjects{kind: kind}
	convert := func(obj runtime.Object) (runtime.Object, error) {
		if obj == nil || kind == st.req.Kind || kind.Empty() {
			return obj, nil
		}
		if gvk := obj.GetObjectKind().GroupVersionKind(); gvk == kind {
			return obj, nil
		}
		return st.e.converter.Convert(obj, kind)
	}
	obj, err := convert(st.req.Object)
	if err != nil {
		return nil, err
	}
	old, err := convert(st.req.OldObject)
	if err != nil {
		return nil, err
	}
	if old != nil {
		m, err := objectValue(old, nil)
		if err != nil {
			vo.err = fmt.Errorf("failed to prepare oldObject variable for evaluation: %w", err)
		} else {
			vo.oldObject = m
		}
	}
	if obj != nil && vo.err == nil {
		m, err := objectValue(obj, nil)
		if err != nil {
			vo.err = fmt.Errorf("failed to prepare object variable for evaluation: %w", err)
		} else {
			vo.object = m
		}
	}
	st.versioned = append(st.versioned, vo)
	return vo, nil
}

// isTypedObject reports whether obj is a non-nil typed Go struct rather than
// an unstructured or raw object.
func isTypedObject(obj runtime.Object) bool {
	switch obj.(type) {
	case nil, runtime.Unstructured, *runtime.Unknown:
		return false
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct
}

// objectValue returns the CEL value of obj as object, oldObject or params.
// A typed struct is read lazily with celvalue.TypedObject, the fields in
// set replacing its own; without set, apiVersion and kind come from the
// scheme when the object leaves them empty, as [builtin.ToUnstructured]
// does. Any other object is converted with [builtin.ToUnstructured].
func objectValue(obj runtime.Object, set map[string]string) (any, error) {
	if !isTypedObject(obj) {
		return builtin.ToUnstructured(obj)
	}
	if set == nil {
		if apiVersion, kind, ok := typeMeta(obj); ok && (apiVersion == "" || kind == "") {
			if gvks, _, err := builtin.Scheme().ObjectKinds(obj); err == nil && len(gvks) > 0 {
				schemeVersion, schemeKind := gvks[0].ToAPIVersionAndKind()
				set = map[string]string{}
				if apiVersion == "" {
					set["apiVersion"] = schemeVersion
				}
				if kind == "" {
					set["kind"] = schemeKind
				}
			}
		}
	}
	return celvalue.TypedObject(obj, set), nil
}

// typeMeta returns obj's apiVersion and kind as written. Typed objects
// embed metav1.TypeMeta and are read directly: meta.TypeAccessor parses and
// re-formats the apiVersion.
func typeMeta(obj runtime.Object) (apiVersion, kind string, ok bool) {
	if tm, isTM := obj.GetObjectKind().(*metav1.TypeMeta); isTM && tm != nil {
		return tm.APIVersion, tm.Kind, true
	}
	ta, err := meta.TypeAccessor(obj)
	if err != nil {
		return "", "", false
	}
	return ta.GetAPIVersion(), ta.GetKind(), true
}

// loadNamespace fetches the request's namespace once, as the API server does
// before evaluating a binding. A Namespace request has no namespaceObject.
func (st *requestState) loadNamespace(ctx context.Context) error {
	if st.nsLoaded {
		return nil
	}
	name := st.req.Namespace
	if k := st.req.Kind; k.Group == "" && k.Version == "v1" && k.Kind == "Namespace" {
		name = ""
	}
	if name != "" {
		var ns *corev1.Namespace
		var err error
		if st.e.opts.Namespaces == nil {
			err = apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
		} else {
			ns, err = st.e.opts.Namespaces.GetNamespace(ctx, name)
		}
		if err == nil && ns == nil {
			err = apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
		}
		if err != nil {
			return namespaceErrorAt(st.e.env.Version(), name, err)
		}
		st.ns = ns
	}
	st.nsLoaded = true
	return nil
}

// authorizerValues returns the values of `authorizer` and
// `authorizer.requestResource`, built once per request: both act for the
// request's user, and requestResource names the resource as requested.
// Their caching authorizer is made here, so that requests no expression
// authorizes allocate none.
func (st *requestState) authorizerValues(ctx context.Context) (ref.Val, ref.Val) {
	if st.authzVal == nil {
		user := st.req.UserInfo
		st.authzVal, st.rrVal = celenv.AuthorizerValues(ctx, authz.NewCaching(st.e.opts.Authorizer), user, authz.RequestResource{
			Group: st.req.Resource.Group, Resource: st.req.Resource.Resource, Subresource: st.req.SubResource,
			Namespace: st.req.Namespace, Name: st.req.Name,
		})
	}
	return st.authzVal, st.rrVal
}

// namespaceWhole returns the JSON form of the request's namespace as audit
// annotations see it (without apiVersion and kind, as the server's informer
// objects), converted on first use.
func (st *requestState) namespaceWhole() any {
	if st.nsWhole == nil {
		ns := *st.ns
		ns.TypeMeta = metav1.TypeMeta{}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&ns)
		if err != nil {
			return nil
		}
		st.nsWhole = m
	}
	return st.nsWhole
}

// trimmedMetadata are the metadata fields the API server copies into the
// namespaceObject of validations (CreateNamespaceObject).
var trimmedMetadata = []string{
	"name", "generateName", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
	"deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "finalizers",
}

// lazyNamespace is namespaceTrimmed as a lazy input value, made once per
// pooled requestState: a method value allocates.
func (st *requestState) lazyNamespace() celvalue.Lazy {
	if st.nsTrimmedLazy == nil {
		st.nsTrimmedLazy = st.namespaceTrimmed
	}
	return st.nsTrimmedLazy
}

// lazyNamespaceWhole is namespaceWhole as lazyNamespace is namespaceTrimmed.
func (st *requestState) lazyNamespaceWhole() celvalue.Lazy {
	if st.nsWholeLazy == nil {
		st.nsWholeLazy = st.namespaceWhole
	}
	return st.nsWholeLazy
}

// namespaceTrimmed returns namespaceObject as validations and message
// expressions see it: spec, status and a subset of metadata.
func (st *requestState) namespaceTrimmed() any {
	if st.nsTrimmed == nil {
		whole, ok := st.namespaceWhole().(map[string]any)
		if !ok {
			return nil
		}
		t := map[string]any{}
		for _, k := range []string{"spec", "status"} {
			if v, ok := whole[k]; ok {
				t[k] = v
			}
		}
		meta := map[string]any{}
		if wm, ok := whole["metadata"].(map[string]any); ok {
			for _, k := range trimmedMetadata {
				if v, ok := wm[k]; ok {
					meta[k] = v
				}
			}
		}
		t["metadata"] = meta
		st.nsTrimmed = t
	}
	return st.nsTrimmed
}

// paramValue returns the CEL form of a param, converted once per request.
// Built-in kinds get apiVersion and kind from the policy's paramKind, as the
// API server injects them into its typed informer objects.
func (st *requestState) paramValue(cp *compiledPolicy, p runtime.Object) (any, *k8stypes.NamespacedName) {
	if p == nil {
		return nil, nil
	}
	var nn *k8stypes.NamespacedName
	if acc, err := meta.Accessor(p); err == nil {
		nn = &k8stypes.NamespacedName{Namespace: acc.GetNamespace(), Name: acc.GetName()}
	}
	if v, ok := st.params[p]; ok {
		return v, nn
	}
	inject := builtin.Scheme().Recognizes(p.GetObjectKind().GroupVersionKind()) || p.GetObjectKind().GroupVersionKind().Empty()
	var v any
	if isTypedObject(p) {
		var set map[string]string
		if inject {
			set = cp.paramTypeMeta
		}
		tv, err := objectValue(p, set)
		if err != nil {
			v = types.NewErr("failed to prepare params: %v", err)
		} else {
			v = tv
		}
		st.rememberParam(p, v)
		return v, nn
	}
	m, err := builtin.ToUnstructured(p)
	if err != nil {
		v = types.NewErr("failed to prepare params: %v", err)
	} else {
		if inject {
			m["apiVersion"] = cp.paramKind.APIVersion
			m["kind"] = cp.paramKind.Kind
		}
		v = m
	}
	st.rememberParam(p, v)
	return v, nn
}

func (st *requestState) rememberParam(p runtime.Object, v any) {
	if st.params == nil {
		st.params = map[runtime.Object]any{}
	}
	st.params[p] = v
}
