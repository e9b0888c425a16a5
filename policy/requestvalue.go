// The `request` variable: the admission request as CEL sees it.

package policy

import (
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/internal/celvalue"
)

// requestValue returns the `request` variable for the given resource and
// kind: the JSON form of the admission request, built once per request and
// resource/kind pair.
func (st *requestState) requestValue(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind) any {
	key := requestKey{gvr, gvk}
	for _, rv := range st.requestVals {
		if rv.key == key {
			return rv.val
		}
	}
	if !st.optionsDone {
		st.optionsDone = true
		if st.req.Options != nil {
			m, err := builtin.ToUnstructured(st.req.Options)
			if err != nil {
				st.options = types.NewErr("failed to prepare request options: %v", err)
			} else {
				st.options = m
			}
		}
	}
	var v any
	if _, failed := st.options.(ref.Val); failed {
		// The options could not be converted: the map carries the error
		// value where request.options is read.
		v = admissionRequestJSON(st.req, gvr, gvk, st.options)
	} else {
		v = celvalue.TypedValue(admissionRequest(st.req, gvr, gvk, st.options))
	}
	st.requestVals = append(st.requestVals, requestVal{key: key, val: v})
	return v
}

// lazyRequest is requestValue, built when an expression first reads
// `request`.
func (st *requestState) lazyRequest(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind) celvalue.Lazy {
	key := requestKey{gvr, gvk}
	for _, l := range st.lazies[:st.nLazy] {
		if l.key == key {
			return l.fn
		}
	}
	if st.nLazy == len(st.lazies) {
		l := &lazyRequest{st: st}
		l.fn = l.value
		st.lazies = append(st.lazies, l)
	}
	l := st.lazies[st.nLazy]
	st.nLazy++
	l.key = key
	return l.fn
}

// lazyRequest is the lazy request value of one resource and kind. A
// requestState keeps its lazyRequests, each with its function, from request
// to request, so that handing one out allocates nothing; within a request
// each key has its own, so that a value handed out earlier keeps its key.
type lazyRequest struct {
	st  *requestState
	key requestKey
	fn  celvalue.Lazy
}

func (l *lazyRequest) value() any { return l.st.requestValue(l.key.gvr, l.key.gvk) }

type requestKey struct {
	gvr schema.GroupVersionResource
	gvk schema.GroupVersionKind
}

type requestVal struct {
	key requestKey
	val any
}

// admissionRequest builds the admission/v1 AdmissionRequest the API server
// passes to CEL (CreateAdmissionRequest): kind and resource are the matched
// ones, requestKind and requestResource the request's; uid is empty because
// the server does not set it; object and oldObject are empty because the
// request carries them in their own variables. options is the converted
// options object, or nil. Read through celvalue.TypedValue, it is what
// admissionRequestJSON builds eagerly, converted only where an expression
// reads it.
func admissionRequest(r *Request, gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, options any) *admissionv1.AdmissionRequest {
	dryRun := r.DryRun
	kind, resource := metav1.GroupVersionKind(r.Kind), metav1.GroupVersionResource(r.Resource)
	ar := &admissionv1.AdmissionRequest{
		Kind: metav1.GroupVersionKind(gvk), Resource: metav1.GroupVersionResource(gvr),
		SubResource: r.SubResource, RequestKind: &kind, RequestResource: &resource,
		RequestSubResource: r.SubResource, Name: r.Name, Namespace: r.Namespace,
		Operation: r.Operation, UserInfo: r.UserInfo, DryRun: &dryRun,
	}
	if m, ok := options.(map[string]any); ok {
		ar.Options = runtime.RawExtension{Object: &unstructured.Unstructured{Object: m}}
	}
	return ar
}

// admissionRequestJSON builds what runtime.DefaultUnstructuredConverter
// makes of the admission/v1 AdmissionRequest the API server passes to CEL:
// kind and resource are the matched ones, requestKind and requestResource
// the request's; fields marked omitempty are absent when empty; uid is empty
// because the server does not set it; object and oldObject are null because
// the request carries them in their own variables. Evaluation uses the lazy
// admissionRequest; this map serves when options failed to convert (the
// error is the value of request.options) and as the tests' oracle.
func admissionRequestJSON(r *Request, gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, options any) map[string]any {
	m := map[string]any{
		"uid":             "",
		"kind":            map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind},
		"resource":        map[string]any{"group": gvr.Group, "version": gvr.Version, "resource": gvr.Resource},
		"requestKind":     map[string]any{"group": r.Kind.Group, "version": r.Kind.Version, "kind": r.Kind.Kind},
		"requestResource": map[string]any{"group": r.Resource.Group, "version": r.Resource.Version, "resource": r.Resource.Resource},
		"operation":       string(r.Operation),
		"userInfo":        userInfoJSON(r.UserInfo),
		"dryRun":          r.DryRun,
		"options":         options,
		"object":          nil,
		"oldObject":       nil,
	}
	if r.SubResource != "" {
		m["subResource"] = r.SubResource
		m["requestSubResource"] = r.SubResource
	}
	if r.Name != "" {
		m["name"] = r.Name
	}
	if r.Namespace != "" {
		m["namespace"] = r.Namespace
	}
	return m
}

func userInfoJSON(u authenticationv1.UserInfo) map[string]any {
	m := map[string]any{}
	if u.Username != "" {
		m["username"] = u.Username
	}
	if u.UID != "" {
		m["uid"] = u.UID
	}
	if len(u.Groups) > 0 {
		groups := make([]any, len(u.Groups))
		for i, g := range u.Groups {
			groups[i] = g
		}
		m["groups"] = groups
	}
	if len(u.Extra) > 0 {
		extra := make(map[string]any, len(u.Extra))
		for k, vs := range u.Extra {
			if vs == nil {
				extra[k] = nil
				continue
			}
			l := make([]any, len(vs))
			for i, v := range vs {
				l[i] = v
			}
			extra[k] = l
		}
		m["extra"] = extra
	}
	return m
}
