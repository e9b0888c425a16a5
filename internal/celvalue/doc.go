// Package celvalue turns Go values into the CEL values the API server
// evaluates admission expressions against, and bounds their sizes for
// celenv's cost estimates. It is vapkit's own machinery, not an API:
// celenv and policy use it, and its names may change at any time.
//
// The package is organised by concept:
//
//   - typeinfo.go: the one per-type cache every other part reads;
//   - plans.go: how a Go value of each type converts (TypedValue);
//   - structs.go: the JSON layout of struct types;
//   - maps.go and lists.go: the lazy CEL maps and lists over Go values;
//   - strings.go: string fields as CEL strings without copies;
//   - ordered.go: maps that iterate in sorted key order;
//   - select.go and chains.go: field reads for celenv's typed paths,
//     which skip cel-go's qualifier chain while values are lazy typed
//     maps;
//   - sizeplan.go, sizewalk.go and sizeconv.go: SizeBound, the largest
//     size in a value without converting it;
//   - paths.go and sizes.go: sizes at the paths an expression reads, and
//     their per-request memo.
//
// Values read Go objects while expressions run and remember what they read:
// a value belongs to one goroutine. The per-type cache is safe for
// concurrent use.
package celvalue

// Lazy is an input value computed on first use: [Resolve] calls it when
// an expression reads the variable. The function must be cheap to call
// again (remember its result) and is called only from the goroutine that
// evaluates. It lets callers skip preparing values, such as the namespace
// object, that no expression reads.
type Lazy func() any

// Resolve returns v, or what v computes when it is a [Lazy].
func Resolve(v any) any {
	if f, ok := v.(Lazy); ok {
		return f()
	}
	return v
}
