package mutation

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"google.golang.org/protobuf/types/known/structpb"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"

	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/internal/patchtypes"
)

// BuildJSONPatch turns the value of a JSONPatch expression (a list of
// JSONPatch values) into a patch, as upstream's jsonPatcher does: op and path
// are always present (Go-quoted, possibly empty), from only when set, value
// only when set and then as the JSON of its protobuf form, after the
// type-name check of Object values.
func BuildJSONPatch(v ref.Val) (jsonpatch.Patch, error) {
	l, ok := v.(traits.Lister)
	if !ok {
		return nil, errors.New("type mismatch: JSONPatchType.expression should evaluate to array")
	}
	patch := jsonpatch.Patch{}
	for it := l.Iterator(); it.HasNext() == types.True; {
		n, err := it.Next().ConvertToNative(reflect.TypeFor[*patchtypes.JSONPatchVal]())
		if err != nil {
			return nil, fmt.Errorf("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch: %w", err)
		}
		p, ok := n.(*patchtypes.JSONPatchVal)
		if !ok {
			return nil, fmt.Errorf("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, got element of %T", n)
		}
		op := jsonpatch.Operation{
			"op":   raw(strconv.Quote(p.Op)),
			"path": raw(strconv.Quote(p.Path)),
		}
		if p.From != "" {
			op["from"] = raw(strconv.Quote(p.From))
		}
		if p.Val != nil {
			if o, ok := p.Val.(*patchtypes.ObjectVal); ok {
				if err := o.CheckTypeNames(); err != nil {
					return nil, fmt.Errorf("type mismatch: %w", err)
				}
			}
			pv, err := p.Val.ConvertToNative(reflect.TypeFor[*structpb.Value]())
			if err != nil {
				return nil, fmt.Errorf("JSONPath valueExpression evaluated to a type that could not marshal to JSON: %w", err)
			}
			b, err := json.Marshal(pv)
			if err != nil {
				return nil, fmt.Errorf("JSONPath valueExpression evaluated to a type that could not marshal to JSON: %w", err)
			}
			op["value"] = raw(string(b))
		}
		patch = append(patch, op)
	}
	return patch, nil
}

func raw(s string) *json.RawMessage {
	m := json.RawMessage(s)
	return &m
}

// serializer encodes and decodes as the API server's strict, non-pretty JSON
// serializer does, over the built-in scheme.
func serializer() *kjson.Serializer {
	s := builtin.Scheme()
	return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, s, s, kjson.SerializerOptions{Strict: true})
}

// ApplyJSONPatch applies patch to obj, whose kind is gvk, and returns the
// patched object, as upstream's jsonPatcher.Patch does:
//   - a failed `test` leaves obj unchanged (all operations of the patch are
//     dropped) and is no error;
//   - other failures of the patch are "JSON Patch: <library error>";
//   - the result is decoded strictly into a new object of obj's form (typed
//     for built-in kinds, unstructured otherwise); a decoding failure is an
//     *apierrors.StatusError (500 InternalError), which ignores
//     failurePolicy upstream.
//
// obj is not modified.
func ApplyJSONPatch(patch jsonpatch.Patch, obj runtime.Object, gvk schema.GroupVersionKind) (runtime.Object, error) {
	ser := serializer()
	doc, err := runtime.Encode(ser, obj)
	if err != nil {
		return nil, fmt.Errorf("failed to create JSON patch: %w", err)
	}
	patched, err := applyRecovered(patch, doc)
	if err != nil {
		if errors.Is(err, jsonpatch.ErrTestFailed) {
			return obj, nil
		}
		return nil, fmt.Errorf("JSON Patch: %w", err)
	}
	var into runtime.Object
	if _, ok := obj.(*unstructured.Unstructured); ok {
		into = &unstructured.Unstructured{}
	} else if into, err = builtin.Scheme().New(gvk); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	out, _, err := ser.Decode(patched, nil, into)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return out, nil
}

// Typed converts the result of a mutation back to the form of the object
// it mutated, as upstream's dispatchOne does before defaulting: results for
// unstructured objects stay as they are; results for built-in objects are
// converted by the scheme to the typed object of gv (the group-version of
// the request's kind). A conversion failure is a plain error.
//
// The scheme's ConvertToVersion deep-copies its input before setting its
// kind; a result the mutation built (anything but mutated itself) belongs
// to no one else, so it is converted without that copy.
func Typed(result, mutated runtime.Object, gv schema.GroupVersion) (runtime.Object, error) {
	if _, ok := mutated.(*unstructured.Unstructured); ok {
		return result, nil
	}
	if result == mutated {
		return builtin.Scheme().ConvertToVersion(result, gv)
	}
	return builtin.Scheme().UnsafeConvertToVersion(result, gv)
}

// errPanic is what a client receives when the API server panics while
// serving its request: json-patch v4 dereferences nil for a `test` of the
// whole document without a value, which a JSONPatch expression can build
// (JSONPatch{op: "test", path: ""}). The server's panic filter answers a
// plain 500 with this text; vapkit returns it as an aborting status.
var errPanic = &apierrors.StatusError{ErrStatus: metav1.Status{
	Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Reason: metav1.StatusReasonInternalError,
	Message: "This request caused apiserver to panic. Look in the logs for details.",
}}

// applyRecovered applies patch to doc, turning a panic of the library into
// errPanic.
func applyRecovered(patch jsonpatch.Patch, doc []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, errPanic
		}
	}()
	return patch.Apply(doc)
}
