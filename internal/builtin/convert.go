package builtin

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// decoder is the API server's non-strict JSON decoder over [Scheme]:
// field names are case-sensitive, unknown fields are dropped and integers
// stay integers.
var decoder = sync.OnceValue(func() *kjson.Serializer {
	s := Scheme()
	return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, s, s, kjson.SerializerOptions{})
})

// isTyped reports whether gvk names a kind of [Scheme], so that the API
// server would hold its objects as typed Go structs.
func isTyped(gvk schema.GroupVersionKind) bool {
	return gvk.Kind != "" && gvk.Version != "" && gvk.Version != runtime.APIVersionInternal && Scheme().Recognizes(gvk)
}

// DecodeJSON decodes one JSON object the way the API server decodes a
// request body. A kind of [Scheme] becomes its typed k8s.io/api struct:
// unknown fields are dropped silently (the stored object never has them,
// whatever the request's fieldValidation). Any other kind becomes an
// *unstructured.Unstructured holding the JSON as written, with integers as
// int64 and other numbers as float64. The input must carry kind and
// apiVersion.
func DecodeJSON(raw []byte) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("decoding object: %w", err)
	}
	gvk := u.GroupVersionKind()
	if !isTyped(gvk) {
		return u, nil
	}
	return decodeTyped(raw, gvk)
}

func decodeTyped(raw []byte, gvk schema.GroupVersionKind) (runtime.Object, error) {
	obj, _, err := decoder().Decode(raw, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", gvk, err)
	}
	return obj, nil
}

// ToUnstructured returns the JSON-shaped map CEL sees for obj as object,
// oldObject or params in the API server:
//
//   - a typed object is converted with
//     runtime.DefaultUnstructuredConverter.ToUnstructured, as apiserver's
//     common.SchemalessTypedToVal does lazily: zero-valued omitempty fields
//     are absent and non-pointer structs are present (status: {});
//   - an *unstructured.Unstructured (or other runtime.Unstructured) or a
//     *runtime.Unknown holding JSON whose kind is in [Scheme] first takes
//     the round trip through its typed struct, because the API server holds
//     built-in objects typed: unknown fields vanish and defaults of the Go
//     types show;
//   - any other unstructured object (custom kinds) is deep-copied as written,
//     with Go integer types widened to int64 and float32 to float64.
//
// Typed objects that leave apiVersion or kind empty get them from [Scheme],
// as the API server sets them before admission. Integers are int64 and
// other numbers float64. The result belongs to the caller; obj is not
// modified.
func ToUnstructured(obj runtime.Object) (map[string]any, error) {
	if obj == nil {
		return nil, errors.New("object is nil")
	}
	if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, fmt.Errorf("object is a nil %T", obj)
	}
	switch o := obj.(type) {
	case *runtime.Unknown:
		if o.ContentType != "" && o.ContentType != runtime.ContentTypeJSON {
			return nil, fmt.Errorf("unsupported content type %q", o.ContentType)
		}
		decoded, err := DecodeJSON(o.Raw)
		if err != nil {
			return nil, err
		}
		return ToUnstructured(decoded)
	case runtime.Unstructured:
		content := o.UnstructuredContent()
		gvk := obj.GetObjectKind().GroupVersionKind()
		if !isTyped(gvk) {
			copied, err := copyJSON(content, "")
			if err != nil {
				return nil, err
			}
			m, _ := copied.(map[string]any)
			if m == nil {
				m = map[string]any{}
			}
			return m, nil
		}
		raw, err := json.Marshal(content)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", gvk, err)
		}
		typed, err := decodeTyped(raw, gvk)
		if err != nil {
			return nil, err
		}
		return typedToUnstructured(typed)
	default:
		return typedToUnstructured(obj)
	}
}

func typedToUnstructured(obj runtime.Object) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", obj, err)
	}
	_, hasVersion := m["apiVersion"]
	_, hasKind := m["kind"]
	if hasVersion && hasKind {
		return m, nil
	}
	// The first kind is the one the API server would set: types
	// registered once have one, and the meta.k8s.io/v1 option kinds are
	// registered there first.
	gvks, _, err := Scheme().ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return m, nil // not a built-in type: leave it as it is
	}
	apiVersion, kind := gvks[0].ToAPIVersionAndKind()
	if !hasVersion {
		m["apiVersion"] = apiVersion
	}
	if !hasKind {
		m["kind"] = kind
	}
	return m, nil
}

// copyJSON deep-copies a JSON-shaped value, normalising numbers to int64
// and float64. at is the field path for error messages.
func copyJSON(v any, at string) (any, error) {
	switch x := v.(type) {
	case nil, bool, string, int64, float64:
		return x, nil
	case map[string]any:
		if x == nil {
			return map[string]any(nil), nil
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := copyJSON(e, at+"."+k)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case []any:
		if x == nil {
			return []any(nil), nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			c, err := copyJSON(e, at+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case int:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint:
		return uintToInt64(uint64(x), at)
	case uint64:
		return uintToInt64(x, at)
	case float32:
		return float64(x), nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("%s: invalid number %q", pathOrRoot(at), string(x))
		}
		return f, nil
	default:
		return nil, fmt.Errorf("%s: unsupported value of type %T", pathOrRoot(at), v)
	}
}

func uintToInt64(u uint64, at string) (any, error) {
	if u > math.MaxInt64 {
		return nil, fmt.Errorf("%s: %d overflows int64", pathOrRoot(at), u)
	}
	return int64(u), nil
}

func pathOrRoot(at string) string {
	if at == "" {
		return "<root>"
	}
	return at[1:]
}
