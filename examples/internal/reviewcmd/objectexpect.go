// Expectations on what the mutating policies made of the request's object:
// the whole final object, a subset it must contain, and the JSON patch.

package reviewcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/runtime"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/policy"
)

// mutated is what a decision made of the request's object, as JSON values
// (maps, lists, strings, bools, json.Number, nil), for the object, the
// objectContains and the patch expectations.
type mutated struct {
	// object is the final object: the request's object as the mutating
	// policies left it (the object the validating policies saw); the
	// request's object when nothing changed it or a mutating policy denied
	// the request; nil when the request has no object (DELETE).
	object any
	// patch is the decision's RFC 6902 patch as a list of operations;
	// empty when no mutation changed the object.
	patch []any
}

// mutatedOf builds what d made of the request's object. raw is the
// request's object as the test wrote it (JSON), nil when it has none. The
// final object is
// raw with the decision's patch applied, so that it holds exactly what the
// test wrote plus what the policies changed; should the patch not apply to
// the written form, it is the decision's object in its unstructured form.
func mutatedOf(raw []byte, d *policy.Decision) (*mutated, error) {
	m := &mutated{patch: []any{}}
	if len(d.Patch) > 0 {
		if err := decodeJSON(d.Patch, &m.patch); err != nil {
			return nil, fmt.Errorf("the decision's patch: %w", err)
		}
	}
	if raw == nil {
		return m, nil
	}
	final := raw
	if len(d.Patch) > 0 {
		p, err := jsonpatch.DecodePatch(d.Patch)
		if err == nil {
			final, err = p.Apply(raw)
		}
		if err != nil {
			u, err := unstructuredOf(d.Object)
			if err != nil {
				return nil, fmt.Errorf("the mutated object: %w", err)
			}
			if final, err = json.Marshal(u); err != nil {
				return nil, fmt.Errorf("the mutated object: %w", err)
			}
		}
	}
	if err := decodeJSON(final, &m.object); err != nil {
		return nil, fmt.Errorf("the mutated object: %w", err)
	}
	return m, nil
}

// objectJSON returns the JSON of a request's object as it was written:
// unstructured objects as they are, others in their unstructured form; nil
// for no object.
func objectJSON(obj runtime.Object) ([]byte, error) {
	if obj == nil {
		return nil, nil
	}
	m, err := unstructuredOf(obj)
	if err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// unstructuredOf returns the content of an unstructured object, or the
// unstructured form of a typed one.
func unstructuredOf(obj runtime.Object) (map[string]any, error) {
	if obj == nil {
		return nil, errors.New("no object")
	}
	if u, ok := obj.(runtime.Unstructured); ok {
		return u.UnstructuredContent(), nil
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}

// decodeJSON decodes data into v with numbers as json.Number.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// nodeValue converts a YAML node to a JSON value (json.Number for
// numbers). Mappings must have string keys; values JSON cannot hold are
// errors.
func (p *expectationParser) nodeValue(n *yaml.Node, path string) (any, error) {
	var v any
	if err := resolve(n).Decode(&v); err != nil {
		return nil, p.errf(n, path, "%v", err)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, p.errf(n, path, "not a JSON value: %v", err)
	}
	var out any
	if err := decodeJSON(raw, &out); err != nil {
		return nil, p.errf(n, path, "not a JSON value: %v", err)
	}
	return out, nil
}

// objectNode reads the value of object or objectContains: a mapping, and
// for object also null (the request has no object).
func (p *expectationParser) objectNode(n *yaml.Node, path string, nullable bool) (*yaml.Node, error) {
	r := resolve(n)
	if r != nil && r.Kind == yaml.ScalarNode && r.ShortTag() == "!!null" && nullable {
		return r, nil
	}
	if _, err := p.fields(r, path); err != nil {
		return nil, err
	}
	if _, err := p.nodeValue(r, path); err != nil {
		return nil, err
	}
	return r, nil
}

// patchOps are the operations of RFC 6902.
var patchOps = []string{"add", "remove", "replace", "move", "copy", "test"}

// patchOpFields are the fields of a patch operation, for the schema test.
var patchOpFields = []string{"op", "path", "from", "value"}

// patchNode reads the value of patch: a list of operations, each a
// mapping with an op of RFC 6902 and a path.
func (p *expectationParser) patchNode(n *yaml.Node) (*yaml.Node, error) {
	r := resolve(n)
	if r == nil || r.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "patch", "expected a list of JSON patch operations, got %s", describe(n))
	}
	for i, item := range r.Content {
		path := fmt.Sprintf("patch[%d]", i)
		fs, err := p.fields(item, path)
		if err != nil {
			return nil, err
		}
		var op, at bool
		for _, f := range fs {
			switch f[0].Value {
			case "op":
				s, err := p.str(f[1], path+".op")
				if err != nil {
					return nil, err
				}
				if !strings.Contains(" "+strings.Join(patchOps, " ")+" ", " "+s+" ") {
					return nil, p.errf(f[1], path+".op", "%q is not one of %s", s, strings.Join(patchOps, ", "))
				}
				op = true
			case "path", "from":
				if _, err := p.str(f[1], path+"."+f[0].Value); err != nil {
					return nil, err
				}
				at = at || f[0].Value == "path"
			case "value":
			default:
				return nil, p.errf(f[0], path+"."+f[0].Value, "unknown field; want %s", strings.Join(patchOpFields, ", "))
			}
		}
		if !op || !at {
			return nil, p.errf(item, path, "an operation needs op and path")
		}
	}
	if _, err := p.nodeValue(r, "patch"); err != nil {
		return nil, err
	}
	return r, nil
}

// checkMutated appends the failed object, objectContains and patch checks
// of e against m. A nil m (no decision) fails them all.
func (e *expectation) checkMutated(m *mutated, out []mismatch) []mismatch {
	if m == nil {
		m = &mutated{}
	}
	if e.object != nil {
		want := mustValue(e.object)
		if !jsonEqual(want, m.object) {
			out = append(out, textMismatch(e.objectLine, "object", renderYAML(want), renderYAML(m.object)))
		}
	}
	if e.objectContains != nil {
		out = append(out, contains(e.objectContains, "objectContains", "", m.object)...)
	}
	if e.patch != nil {
		want := mustValue(e.patch)
		if !jsonEqual(want, m.patch) {
			out = append(out, textMismatch(e.patchLine, "patch", renderOps(want), renderOps(m.patch)))
		}
	}
	if e.fixedLine != 0 {
		for i := range out {
			out[i].line = e.fixedLine
		}
	}
	return out
}

// textMismatch is a mismatch between two renderings, shown as a line diff.
func textMismatch(line int, path, want, got string) mismatch {
	return mismatch{line: line, path: path, want: want, got: got, diff: lineDiff(want, got)}
}

// mustValue converts a node the parser already checked.
func mustValue(n *yaml.Node) any {
	v, err := (&expectationParser{}).nodeValue(n, "")
	if err != nil {
		return err.Error()
	}
	return v
}

// contains checks that got contains the subset written at node n (at
// field path, under the expectation's field root) and returns every place
// it does not:
//
//   - a mapping: got is a mapping that has each of its keys, with a value
//     containing the key's value; other keys of got are not checked. A
//     key whose value is null must be absent from got, or null.
//   - a list: got is a list, and the items of the expected list are
//     contained, in order, by distinct items of got (a subsequence: other
//     items may come before, between and after them). [] is contained by
//     every list.
//   - a scalar: got is equal to it; numbers compare by value (1 and 1.0
//     are equal), strings, booleans and null exactly.
func contains(n *yaml.Node, root, path string, got any) []mismatch {
	n = resolve(n)
	at := func(want, gotText string) []mismatch {
		where := root
		if path != "" {
			where = join(root, path)
		}
		return []mismatch{textMismatch(n.Line, where, want, gotText)}
	}
	switch n.Kind {
	case yaml.MappingNode:
		gm, ok := got.(map[string]any)
		if !ok {
			return at(renderYAML(mustValue(n)), describeValue(got))
		}
		var out []mismatch
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
			child := fieldPath(path, k.Value)
			gv, present := gm[k.Value]
			switch {
			case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null":
				if present && gv != nil {
					out = append(out, textMismatch(k.Line, join(root, child), "no such field", renderYAML(gv)))
				}
			case !present:
				out = append(out, textMismatch(k.Line, join(root, child), renderYAML(mustValue(v)), "no such field"))
			default:
				out = append(out, contains(v, root, child, gv)...)
			}
		}
		return out
	case yaml.SequenceNode:
		gl, ok := got.([]any)
		if !ok {
			return at(renderYAML(mustValue(n)), describeValue(got))
		}
		var out []mismatch
		next := 0
		for i, item := range n.Content {
			found := -1
			for j := next; j < len(gl); j++ {
				if len(contains(item, "", "", gl[j])) == 0 {
					found = j
					break
				}
			}
			if found < 0 {
				rest := "no items left"
				if next < len(gl) {
					rest = renderYAML(gl[next:])
				}
				if next > 0 {
					rest = fmt.Sprintf("# items [%d:] of the list, after the one matching item %d\n%s", next, i-1, rest)
				}
				out = append(out, textMismatch(resolve(item).Line, join(root, fmt.Sprintf("%s[%d]", path, i)), renderYAML(mustValue(item)), rest))
				continue
			}
			next = found + 1
		}
		return out
	}
	if want := mustValue(n); !jsonEqual(want, got) {
		return at(renderYAML(want), renderYAML(got))
	}
	return nil
}

// simpleKey is a key written as .key in field paths.
var simpleKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// fieldPath appends key to path: .key, or ["key"] when it holds other
// characters (metadata.labels["app.kubernetes.io/name"]).
func fieldPath(path, key string) string {
	if simpleKey.MatchString(key) {
		return join(path, key)
	}
	return path + "[" + strconv.Quote(key) + "]"
}

// describeValue names the JSON type of v, with its YAML.
func describeValue(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "a mapping:\n" + renderYAML(v)
	case []any:
		return "a list:\n" + renderYAML(v)
	}
	return renderYAML(v)
}

// jsonEqual reports whether two JSON values are equal: numbers by value,
// maps key by key, lists item by item.
func jsonEqual(a, b any) bool {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, x := range av {
			y, ok := bv[k]
			if !ok || !jsonEqual(x, y) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !jsonEqual(av[i], bv[i]) {
				return false
			}
		}
		return true
	case json.Number:
		bv, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x, err := av.Int64(); err == nil {
			if y, err := bv.Int64(); err == nil {
				return x == y
			}
		}
		x, errA := av.Float64()
		y, errB := bv.Float64()
		return errA == nil && errB == nil && x == y
	}
	return a == b
}

// renderYAML renders v as YAML with sorted keys, without the final
// newline.
func renderYAML(v any) string {
	out, err := sigsyaml.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(string(out), "\n")
}

// renderOps renders a patch one operation a line, as compact JSON with
// sorted keys; an empty patch is "[]".
func renderOps(v any) string {
	ops, ok := v.([]any)
	if !ok {
		return renderYAML(v)
	}
	if len(ops) == 0 {
		return "[]"
	}
	lines := make([]string, len(ops))
	for i, op := range ops {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(op); err != nil {
			lines[i] = fmt.Sprintf("%v", op)
			continue
		}
		lines[i] = strings.TrimSuffix(b.String(), "\n")
	}
	return strings.Join(lines, "\n")
}
