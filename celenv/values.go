package celenv

import (
	"github.com/google/cel-go/common/types/ref"

	"github.com/vapkit/vapkit/internal/celvalue"
)

// Lazy is an Input value computed on first use: ResolveName calls it when
// an expression reads the variable. The function must be cheap to call
// again (remember its result) and is called only from the goroutine that
// evaluates the batch.
type Lazy = celvalue.Lazy

// Sizes remembers the size bounds that untracked batches work out for the
// inputs of one request. Call Reset before reusing it for another request.
type Sizes = celvalue.Sizes

// TypedValue returns obj, a Go value such as a pointer to a typed
// k8s.io/api struct, as the CEL value the API server evaluates against,
// converted lazily.
func TypedValue(obj any) ref.Val { return celvalue.TypedValue(obj) }

// TypedObject is [TypedValue] for an object whose top-level map has the
// string fields in set added or replaced.
func TypedObject(obj any, set map[string]string) ref.Val { return celvalue.TypedObject(obj, set) }

// SizeBound returns an upper bound on the size of every string, bytes,
// list and map value reachable from v in its CEL form.
func SizeBound(v any) uint64 { return celvalue.SizeBound(v) }
