package manifest

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	sjson "sigs.k8s.io/json"
)

// fieldError is one problem found by the strict checker, with the path of
// the offending field relative to the document root.
type fieldError struct {
	path fieldPath
	msg  string
	dup  bool // a duplicate key: locate its last occurrence
}

func (e *fieldError) Error() string { return e.msg }

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checker walks a JSON value token by token alongside a Go type and reports
// the first unknown field, duplicate field or type mismatch in document
// order. It exists because encoding/json and sigs.k8s.io/json report type
// errors without list indices ("Go struct field Validation.spec.validations.
// expression") and stop before reporting unknown fields.
//
// A checker is used for one value and then discarded; its cache of struct
// field tables is never shared between calls.
type checker struct {
	dec    *json.Decoder
	fields map[reflect.Type]map[string]reflect.Type
}

// checkStrict checks that data, which must hold exactly one JSON value,
// decodes into a value of type t without unknown fields, duplicate fields or
// type mismatches. base is prepended to every reported path. A nil t checks
// only for duplicate keys (used for schemaless objects).
func checkStrict(data []byte, t reflect.Type, base fieldPath) *fieldError {
	c := &checker{
		dec:    json.NewDecoder(bytes.NewReader(data)),
		fields: map[reflect.Type]map[string]reflect.Type{},
	}
	c.dec.UseNumber()
	if t == nil {
		return c.any(base)
	}
	return c.value(t, base)
}

// value checks the next value in the stream against t.
func (c *checker) value(t reflect.Type, path fieldPath) *fieldError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if implementsUnmarshaler(t) {
		return c.custom(t, path)
	}
	if t.Kind() == reflect.Interface {
		return c.any(path)
	}
	tok, err := c.dec.Token()
	if err != nil {
		return c.readError(path, err)
	}
	if tok == nil {
		// encoding/json leaves the target untouched for null, whatever its type.
		return nil
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Array:
		return c.composite(t, tok, path)
	}
	return scalar(t, tok, path)
}

// composite checks an object or array, whose first token tok was just
// read, against the struct, map, slice or array type t.
func (c *checker) composite(t reflect.Type, tok json.Token, path fieldPath) *fieldError {
	switch t.Kind() {
	case reflect.Struct:
		if !isDelim(tok, '{') {
			return mismatch(path, "object", tok)
		}
		return c.object(path, func(key string) (reflect.Type, bool) {
			ft, ok := c.structFields(t)[key]
			return ft, ok
		})
	case reflect.Map:
		if !isDelim(tok, '{') {
			return mismatch(path, "object", tok)
		}
		elem := t.Elem()
		return c.object(path, func(string) (reflect.Type, bool) { return elem, true })
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			// []byte is base64 text in JSON.
			if _, ok := tok.(string); !ok {
				return mismatch(path, "string", tok)
			}
			return nil
		}
		if !isDelim(tok, '[') {
			return mismatch(path, "array", tok)
		}
		for i := 0; c.dec.More(); i++ {
			if fe := c.value(t.Elem(), path.index(i)); fe != nil {
				return fe
			}
		}
		return c.closing(path)
	}
	return nil
}

// scalar checks the scalar token tok against the type t.
func scalar(t reflect.Type, tok json.Token, path fieldPath) *fieldError {
	switch t.Kind() {
	case reflect.String:
		if _, ok := tok.(string); !ok {
			return mismatch(path, "string", tok)
		}
	case reflect.Bool:
		if _, ok := tok.(bool); !ok {
			return mismatch(path, "boolean", tok)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := tok.(json.Number)
		if !ok {
			return mismatch(path, "integer", tok)
		}
		if _, err := strconv.ParseInt(string(n), 10, t.Bits()); err != nil {
			return numberError(path, n, t, err)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := tok.(json.Number)
		if !ok {
			return mismatch(path, "integer", tok)
		}
		if _, err := strconv.ParseUint(string(n), 10, t.Bits()); err != nil {
			return numberError(path, n, t, err)
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := tok.(json.Number); !ok {
			return mismatch(path, "number", tok)
		}
	default:
		return &fieldError{path: path, msg: prefixPath(path, fmt.Sprintf("cannot decode into Go type %s", t))}
	}
	return nil
}

// object checks the members of an object whose '{' was just read. lookup
// gives the type of a member, or false for an unknown one.
func (c *checker) object(path fieldPath, lookup func(string) (reflect.Type, bool)) *fieldError {
	seen := map[string]bool{}
	for c.dec.More() {
		tok, err := c.dec.Token()
		if err != nil {
			return c.readError(path, err)
		}
		key, _ := tok.(string)
		p := path.child(key)
		if seen[key] {
			return &fieldError{path: p, msg: fmt.Sprintf("duplicate field %q", p.String()), dup: true}
		}
		seen[key] = true
		ft, ok := lookup(key)
		if !ok {
			return &fieldError{path: p, msg: fmt.Sprintf("unknown field %q", p.String())}
		}
		if fe := c.value(ft, p); fe != nil {
			return fe
		}
	}
	return c.closing(path)
}

// any checks a schemaless value: only duplicate keys are problems.
func (c *checker) any(path fieldPath) *fieldError {
	tok, err := c.dec.Token()
	if err != nil {
		return c.readError(path, err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if d == '{' {
		seen := map[string]bool{}
		for c.dec.More() {
			tok, err := c.dec.Token()
			if err != nil {
				return c.readError(path, err)
			}
			key, _ := tok.(string)
			p := path.child(key)
			if seen[key] {
				return &fieldError{path: p, msg: fmt.Sprintf("duplicate field %q", p.String()), dup: true}
			}
			seen[key] = true
			if fe := c.any(p); fe != nil {
				return fe
			}
		}
		return c.closing(path)
	}
	for i := 0; c.dec.More(); i++ {
		if fe := c.any(path.index(i)); fe != nil {
			return fe
		}
	}
	return c.closing(path)
}

// custom checks a value whose type decodes itself (metav1.Time,
// runtime.RawExtension, ...) by decoding it into a fresh value of that type.
func (c *checker) custom(t reflect.Type, path fieldPath) *fieldError {
	var raw json.RawMessage
	if err := c.dec.Decode(&raw); err != nil {
		return c.readError(path, err)
	}
	if err := sjson.UnmarshalCaseSensitivePreserveInts(raw, reflect.New(t).Interface()); err != nil {
		return &fieldError{path: path, msg: prefixPath(path, cleanJSONError(err))}
	}
	return nil
}

// closing consumes the '}' or ']' that ends the current container.
func (c *checker) closing(path fieldPath) *fieldError {
	if _, err := c.dec.Token(); err != nil {
		return c.readError(path, err)
	}
	return nil
}

func (c *checker) readError(path fieldPath, err error) *fieldError {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return &fieldError{path: path, msg: "invalid JSON: " + err.Error()}
}

// structFields returns the JSON member names of struct type t with their Go
// types, following encoding/json's rules for tags and embedded structs. Names
// are matched case-sensitively, as the API server's decoder does.
func (c *checker) structFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := c.fields[t]; ok {
		return m
	}
	m := map[string]reflect.Type{}
	addStructFields(m, t, 0)
	c.fields[t] = m
	return m
}

// addStructFields adds the fields of t to m without replacing names already
// present, so that shallower fields win over promoted ones.
func addStructFields(m map[string]reflect.Type, t reflect.Type, depth int) {
	if depth > 8 {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addStructFields(m, ft, depth+1)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, ok := m[name]; !ok {
			m[name] = f.Type
		}
	}
}

func implementsUnmarshaler(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshalerType) || pt.Implements(jsonUnmarshalerType) ||
		t.Implements(textUnmarshalerType) || pt.Implements(textUnmarshalerType)
}

func isDelim(tok json.Token, d json.Delim) bool {
	got, ok := tok.(json.Delim)
	return ok && got == d
}

// jsonKind names the JSON type of the token that starts a value.
func jsonKind(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return "array"
		}
		return "object"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	default:
		return "null"
	}
}

func mismatch(path fieldPath, want string, tok json.Token) *fieldError {
	return &fieldError{path: path, msg: prefixPath(path, fmt.Sprintf("expected %s, got %s", want, jsonKind(tok)))}
}

func numberError(path fieldPath, n json.Number, t reflect.Type, err error) *fieldError {
	msg := fmt.Sprintf("expected integer, got number %s", n)
	if errors.Is(err, strconv.ErrRange) {
		msg = fmt.Sprintf("integer %s out of range for %s", n, t.Kind())
	}
	return &fieldError{path: path, msg: prefixPath(path, msg)}
}

// prefixPath renders "path: msg", or just msg at the document root.
func prefixPath(path fieldPath, msg string) string {
	if len(path) == 0 {
		return msg
	}
	return path.String() + ": " + msg
}

// cleanJSONError drops the "json: " prefix the decoders put on their errors.
func cleanJSONError(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}
