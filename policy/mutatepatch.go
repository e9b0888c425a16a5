// The RFC 6902 JSON patch from the request's object to the mutated one, for
// webhooks that answer with patches.

package policy

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/internal/patchtypes"
)

// patchOp is one RFC 6902 operation.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// jsonPatchBetween returns the JSON patch that turns from's JSON form into
// to's: objects are compared key by key (in sorted order), lists element by
// element when their lengths agree and replaced whole otherwise. The API
// server returns no patch for MAPs (it mutates in place); this is what a
// mutating webhook answers.
func jsonPatchBetween(from, to runtime.Object) ([]byte, error) {
	a, err := builtin.ToUnstructured(from)
	if err != nil {
		return nil, err
	}
	b, err := builtin.ToUnstructured(to)
	if err != nil {
		return nil, err
	}
	ops := diffJSON(nil, "", a, b)
	if len(ops) == 0 {
		return nil, nil
	}
	return marshalOps(ops)
}

// diffJSON appends the operations that turn a into b at path.
func diffJSON(ops []patchOp, path string, a, b any) []patchOp {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(av)+len(bv))
		for k := range av {
			keys = append(keys, k)
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := path + "/" + patchtypes.EscapeKey(k)
			x, inA := av[k]
			y, inB := bv[k]
			switch {
			case !inB:
				ops = append(ops, patchOp{Op: "remove", Path: p})
			case !inA:
				ops = append(ops, patchOp{Op: "add", Path: p, Value: nullable(y)})
			default:
				ops = diffJSON(ops, p, x, y)
			}
		}
		return ops
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			break
		}
		for i := range av {
			ops = diffJSON(ops, path+"/"+strconv.Itoa(i), av[i], bv[i])
		}
		return ops
	}
	if reflect.DeepEqual(a, b) {
		return ops
	}
	return append(ops, patchOp{Op: "replace", Path: path, Value: nullable(b)})
}

// nullable keeps a null value in the encoded operation: omitempty would drop
// a nil interface.
func nullable(v any) any {
	if v == nil {
		return json.RawMessage("null")
	}
	return v
}
