package celvalue

import (
	"testing"
	"unsafe"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// TestTypedMapSlots checks that every kind of inline slot gives back the
// value stored, identical, that values of other types are refused, and
// that typedMap stays in the 112-byte size class its slots buy.
func TestTypedMapSlots(t *testing.T) {
	if size := unsafe.Sizeof(typedMap{}); size > 112 {
		t.Errorf("typedMap is %d bytes, want at most 112", size)
	}
	vals := []ref.Val{
		nil, &typedMap{}, &typedList{}, types.String("image"), types.Int(-3), types.True, types.Double(1.5),
		types.NullValue, types.Uint(7), types.Bytes("b"), types.NewErr("no"), &orderedMap{},
	}
	var m typedMap
	for _, v := range vals {
		for k := range inlineCache {
			if !m.setSlot(k, v) {
				t.Fatalf("setSlot(%d, %T) refused", k, v)
			}
			if got := m.slot(k); *(*iface)(unsafe.Pointer(&got)) != *(*iface)(unsafe.Pointer(&v)) {
				t.Errorf("slot(%d) = %v (%T), want %v (%T)", k, got, got, v, v)
			}
		}
	}
	if m.setSlot(0, types.OptionalOf(types.Int(1))) {
		t.Errorf("setSlot accepted an optional, which no kind stands for")
	}
}
