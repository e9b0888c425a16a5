package manifest

import (
	"strconv"
	"strings"
)

// pathElem is one step of a field path: a map key or a list index.
type pathElem struct {
	key     string
	index   int
	isIndex bool
}

// fieldPath locates a value inside a document, printed the way Kubernetes
// prints field paths: spec.validations[0].expression.
type fieldPath []pathElem

// child returns a new path with key appended. The receiver is never modified,
// so callers may keep sharing it.
func (p fieldPath) child(key string) fieldPath {
	out := make(fieldPath, len(p), len(p)+1)
	copy(out, p)
	return append(out, pathElem{key: key})
}

// index returns a new path with list index i appended.
func (p fieldPath) index(i int) fieldPath {
	out := make(fieldPath, len(p), len(p)+1)
	copy(out, p)
	return append(out, pathElem{index: i, isIndex: true})
}

// String renders the path; the empty path renders as "".
func (p fieldPath) String() string {
	var b strings.Builder
	for i, e := range p {
		switch {
		case e.isIndex:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(e.index))
			b.WriteByte(']')
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(e.key)
		}
	}
	return b.String()
}

// parseFieldPath reads a path as Kubernetes prints it: keys separated by
// dots, list indices and map keys in brackets.
func parseFieldPath(s string) fieldPath {
	var p fieldPath
	for s != "" {
		switch s[0] {
		case '.':
			s = s[1:]
		case '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return append(p, pathElem{key: s[1:]})
			}
			inner := s[1:end]
			if i, err := strconv.Atoi(inner); err == nil && i >= 0 {
				p = append(p, pathElem{index: i, isIndex: true})
			} else {
				p = append(p, pathElem{key: inner})
			}
			s = s[end+1:]
		default:
			end := strings.IndexAny(s, ".[")
			if end < 0 {
				end = len(s)
			}
			p = append(p, pathElem{key: s[:end]})
			s = s[end:]
		}
	}
	return p
}
