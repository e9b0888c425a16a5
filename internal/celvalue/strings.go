package celvalue

import (
	"unsafe"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// stringTab is the itab of types.String as a ref.Val.
var stringTab = func() unsafe.Pointer {
	var v ref.Val = types.String("")
	return (*iface)(unsafe.Pointer(&v)).tab
}()

// stringAt returns the string whose header is at p, a string field or
// element of the object a value reads, as a types.String without boxing a
// copy of the header: the value's data word is p itself. Objects must
// not change while their values are in use (see [TypedValue]), so the
// value never changes either; converting a field per container read
// allocates nothing.
func stringAt(p unsafe.Pointer) ref.Val {
	var v ref.Val
	*(*iface)(unsafe.Pointer(&v)) = iface{tab: stringTab, data: p}
	return v
}
