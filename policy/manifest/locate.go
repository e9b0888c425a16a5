package manifest

import (
	"bytes"
	"encoding/json"
	"sort"

	yamlv3 "go.yaml.in/yaml/v3"
)

// lineIndex maps byte offsets of a file to 1-based line numbers.
type lineIndex struct {
	newlines []int // offsets of every '\n', ascending
}

func newLineIndex(data []byte) *lineIndex {
	idx := &lineIndex{newlines: make([]int, 0, bytes.Count(data, []byte{'\n'}))}
	for off := 0; ; {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			break
		}
		idx.newlines = append(idx.newlines, off+i)
		off += i + 1
	}
	return idx
}

// line returns the line holding the byte at off.
func (l *lineIndex) line(off int) int {
	return 1 + sort.SearchInts(l.newlines, off)
}

// locator finds the file line of a field path inside one document. It
// returns 0 when the path cannot be found. With last set, the final key is
// looked up at its last occurrence, which is where a duplicate is. Locating only happens on the error
// path and for List items, so it re-parses the document lazily.
type locator interface {
	locate(path fieldPath, last bool) int
}

// yamlLocator locates paths in a YAML document with go.yaml.in/yaml/v3,
// whose nodes carry line numbers (sigs.k8s.io/yaml keeps none).
type yamlLocator struct {
	src       []byte // the document text
	firstLine int    // file line of src[0]
	parsed    bool
	root      *yamlv3.Node
}

func (y *yamlLocator) locate(path fieldPath, last bool) int {
	if !y.parsed {
		y.parsed = true
		var n yamlv3.Node
		if err := yamlv3.Unmarshal(y.src, &n); err == nil {
			y.root = &n
		}
	}
	n := y.root
	if n == nil {
		return 0
	}
	if n.Kind == yamlv3.DocumentNode {
		if len(n.Content) == 0 {
			return 0
		}
		n = n.Content[0]
	}
	line := 0
	for depth, e := range path {
		final := last && depth == len(path)-1
		if n.Kind == yamlv3.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		var next *yamlv3.Node
		switch {
		case e.isIndex && n.Kind == yamlv3.SequenceNode:
			if e.index < len(n.Content) {
				next = n.Content[e.index]
				line = next.Line
			}
		case !e.isIndex && n.Kind == yamlv3.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == e.key {
					line = n.Content[i].Line
					next = n.Content[i+1]
					if !final {
						break
					}
				}
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	if line == 0 {
		return 0
	}
	return y.firstLine + line - 1
}

// jsonLocator locates paths in a JSON document by walking its tokens along
// the path, skipping the values that are not on it.
type jsonLocator struct {
	src   []byte // the document text
	start int    // file offset of src[0]
	lines *lineIndex
}

func (j *jsonLocator) locate(path fieldPath, last bool) int {
	dec := json.NewDecoder(bytes.NewReader(j.src))
	if _, err := dec.Token(); err != nil { // the opening '{'
		return 0
	}
	found := -1
	for depth, e := range path {
		off, ok := j.step(dec, e, last && depth == len(path)-1)
		if !ok {
			break
		}
		found = off
		if depth == len(path)-1 {
			break
		}
		// Enter the container that follows; scalars end the walk.
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if _, ok := tok.(json.Delim); !ok {
			break
		}
	}
	if found < 0 {
		return 0
	}
	return j.lines.line(j.start + found)
}

// step advances dec, positioned inside a container, to the member or element
// e and returns the offset of its key, or of the element's first byte. With
// last set it scans the whole object and returns the last matching key.
func (j *jsonLocator) step(dec *json.Decoder, e pathElem, last bool) (int, bool) {
	if e.isIndex {
		for i := 0; dec.More(); i++ {
			if i == e.index {
				// The element starts at the next non-space byte.
				off := int(dec.InputOffset())
				for off < len(j.src) && (isSpace(j.src[off]) || j.src[off] == ',') {
					off++
				}
				return off, true
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return 0, false
			}
		}
		return 0, false
	}
	found := -1
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := tok.(string)
		if key == e.key {
			found = int(dec.InputOffset()) - 1
			if !last {
				return found, true
			}
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			break
		}
	}
	return found, found >= 0
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\r' || b == '\n'
}
