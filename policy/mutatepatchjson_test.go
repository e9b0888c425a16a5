package policy

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"
)

// randomJSON builds a random unstructured value of the kinds a JSON patch
// carries, with strings that need escaping now and then, floats and
// other Go types.
func randomJSON(r *rand.Rand, depth int) any {
	strs := []string{"", "a", "web", "x<y", "a&b", `q"`, `b\s`, "tab\t", "é", "\u2028", "\x7f", "line\n", "/path/~1"}
	k := r.IntN(11)
	if (k == 5 || k == 6 || k == 7) && r.IntN(4) > 0 {
		k = 3 // mostly plain: floats and other Go types now and then
	}
	if depth > 3 && k >= 8 {
		k = r.IntN(8)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return r.Int64N(1<<40) - 1<<39
	case 3, 4:
		if r.IntN(4) > 0 {
			return "v" + strconv.Itoa(r.IntN(100))
		}
		return strs[r.IntN(len(strs))]
	case 5:
		return 1.5
	case 6:
		return int32(7)
	case 7:
		return json.RawMessage("null")
	case 8:
		if r.IntN(5) == 0 {
			return []any(nil)
		}
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randomJSON(r, depth+1)
		}
		return l
	default:
		if r.IntN(5) == 0 {
			return map[string]any(nil)
		}
		m := map[string]any{}
		for range r.IntN(5) {
			key := string(rune('a' + r.IntN(26)))
			if r.IntN(10) == 0 {
				key = strs[r.IntN(len(strs))] + key
			}
			m[key] = randomJSON(r, depth+1)
		}
		return m
	}
}

// TestMarshalOps checks marshalOps against json.Marshal byte for byte on
// random operations, plain or not, and that plain ones are written without
// json.Marshal's allocations.
func TestMarshalOps(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 7))
	ops := []string{"add", "remove", "replace"}
	for i := range 5000 {
		var in []patchOp
		for range 1 + r.IntN(4) {
			in = append(in, patchOp{Op: ops[r.IntN(3)], Path: "/spec/" + []string{"a", "b<", "~0c"}[r.IntN(3)], Value: randomJSON(r, 0)})
		}
		want, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalOps(in)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("case %d: marshalOps = %s, json.Marshal = %s", i, got, want)
		}
	}
	plain := []patchOp{{Op: "replace", Path: "/spec/template/spec/containers", Value: []any{
		map[string]any{"name": "a", "image": "r/a:1", "ports": []any{map[string]any{"containerPort": int64(80)}}, "stdin": false},
	}}, {Op: "add", Path: "/metadata/labels/x", Value: json.RawMessage("null")}}
	n := testing.AllocsPerRun(100, func() { _, _ = marshalOps(plain) })
	m := testing.AllocsPerRun(100, func() { _, _ = json.Marshal(plain) })
	if n > 4 || n*2 > m {
		t.Errorf("marshalOps of plain operations: %v allocations (json.Marshal %v), want at most 4 and half", n, m)
	}
}
