package celenv

import (
	"reflect"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/vapkit/vapkit/internal/celvalue"
)

// TestNativeToValueShortcut checks that the provider's shortcut for CEL
// values gives what its adapter gives: CEL values as they are, pointers to
// cel-go's primitive values dereferenced, Go values adapted.
func TestNativeToValueShortcut(t *testing.T) {
	p := newTypeProvider(types.NewEmptyRegistry())
	s, i := types.String("x"), types.Int(3)
	for _, v := range []any{
		types.String("image"), types.Int(1), types.True, types.NullValue, types.NewErr("no"),
		celvalue.TypedValue(map[string]any{"a": "b"}), &s, &i,
		"go", int64(2), map[string]any{"k": []any{"v"}}, nil,
	} {
		got, want := p.NativeToValue(v), p.adapter.NativeToValue(v)
		if got.Type() != want.Type() || !reflect.DeepEqual(got.Value(), want.Value()) {
			t.Errorf("NativeToValue(%T) = %v (%T), adapter gives %v (%T)", v, got, got, want, want)
		}
		if r, ok := v.(ref.Val); ok && reflect.TypeOf(r).Kind() != reflect.Pointer && got != r {
			t.Errorf("NativeToValue(%v) = %v, want the value itself", v, got)
		}
	}
}
