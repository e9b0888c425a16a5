// The JSON encoding of a JSON patch, written directly where that is plain.

package policy

import (
	"encoding/json"
	"slices"
	"strconv"
)

// marshalOps returns json.Marshal(ops). Operations whose paths, keys,
// strings and numbers are plain (see appendPlain) are written directly,
// without the reflection and the per-map key sorting buffers of
// encoding/json; anything else is left to json.Marshal.
func marshalOps(ops []patchOp) ([]byte, error) {
	buf := make([]byte, 0, 256*len(ops))
	keys := make([]string, 0, 32)
	buf = append(buf, '[')
	for i, op := range ops {
		if i > 0 {
			buf = append(buf, ',')
		}
		var ok bool
		buf = append(buf, `{"op":`...)
		if buf, ok = appendString(buf, op.Op); !ok {
			return json.Marshal(ops)
		}
		buf = append(buf, `,"path":`...)
		if buf, ok = appendString(buf, op.Path); !ok {
			return json.Marshal(ops)
		}
		if op.Value != nil {
			buf = append(buf, `,"value":`...)
			if buf, keys, ok = appendPlain(buf, keys, op.Value); !ok {
				return json.Marshal(ops)
			}
		}
		buf = append(buf, '}')
	}
	return append(buf, ']'), nil
}

// appendPlain appends v's JSON encoding as encoding/json writes it, for
// the values whose encoding leaves no choice: nil, booleans, int64,
// strings and map keys of printable ASCII that JSON (with encoding/json's
// HTML escaping) leaves unescaped, maps with such keys (in sorted order)
// and lists of such values, and json.RawMessage("null"). ok is false for
// anything else (floats included). keys is a buffer for map keys, used
// as a stack.
func appendPlain(buf []byte, keys []string, v any) (_ []byte, _ []string, ok bool) {
	switch v := v.(type) {
	case nil:
		return append(buf, "null"...), keys, true
	case bool:
		return strconv.AppendBool(buf, v), keys, true
	case int64:
		return strconv.AppendInt(buf, v, 10), keys, true
	case string:
		buf, ok = appendString(buf, v)
		return buf, keys, ok
	case json.RawMessage:
		return append(buf, "null"...), keys, string(v) == "null"
	case []any:
		return appendList(buf, keys, v)
	case map[string]any:
		return appendMap(buf, keys, v)
	}
	return buf, keys, false
}

func appendList(buf []byte, keys []string, l []any) (_ []byte, _ []string, ok bool) {
	if l == nil {
		return append(buf, "null"...), keys, true
	}
	buf = append(buf, '[')
	for i, e := range l {
		if i > 0 {
			buf = append(buf, ',')
		}
		if buf, keys, ok = appendPlain(buf, keys, e); !ok {
			return buf, keys, false
		}
	}
	return append(buf, ']'), keys, true
}

func appendMap(buf []byte, keys []string, m map[string]any) (_ []byte, _ []string, ok bool) {
	if m == nil {
		return append(buf, "null"...), keys, true
	}
	start := len(keys)
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys[start:])
	buf = append(buf, '{')
	for i := start; i < len(keys); i++ {
		if i > start {
			buf = append(buf, ',')
		}
		if buf, ok = appendString(buf, keys[i]); !ok {
			return buf, keys, false
		}
		buf = append(buf, ':')
		if buf, keys, ok = appendPlain(buf, keys, m[keys[i]]); !ok {
			return buf, keys, false
		}
	}
	return append(buf, '}'), keys[:start], true
}

// appendString appends s quoted when no byte of it needs escaping:
// printable ASCII but for the quote, the backslash and the characters
// encoding/json escapes for HTML (<, > and &).
func appendString(buf []byte, s string) ([]byte, bool) {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return buf, false
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"'), true
}
