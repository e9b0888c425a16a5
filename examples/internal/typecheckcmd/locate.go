package typecheckcmd

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
)

// locators holds the parsed YAML documents of one file.
type locators struct {
	docs []*yamlv3.Node
}

func newLocators(data []byte) *locators {
	l := &locators{}
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	for {
		var n yamlv3.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) || err != nil {
			break
		}
		if n.Kind == yamlv3.DocumentNode && len(n.Content) == 1 {
			l.docs = append(l.docs, n.Content[0])
		}
	}
	return l
}

// find returns the locator of the object that starts at line (item > 0:
// the item-th element of a List document starting there).
func (l *locators) find(line, item int) *locator {
	for _, d := range l.docs {
		if item > 0 {
			items := child(d, "items")
			if items != nil && items.Kind == yamlv3.SequenceNode && item <= len(items.Content) && items.Content[item-1].Line == line {
				return &locator{root: items.Content[item-1]}
			}
			if d.Line <= line && items != nil && item <= len(items.Content) && items.Content[item-1].Line == line {
				return &locator{root: items.Content[item-1]}
			}
			continue
		}
		if d.Line == line {
			return &locator{root: d}
		}
	}
	return &locator{}
}

// locator finds lines of field paths inside one object.
type locator struct {
	root *yamlv3.Node
}

// line returns the line of the deepest node of path that exists, or def.
func (l *locator) line(path string, def int) int {
	if l == nil || l.root == nil {
		return def
	}
	n := l.root
	best := def
	for _, seg := range splitPath(path) {
		var next *yamlv3.Node
		if strings.HasPrefix(seg, "[") && strings.HasSuffix(seg, "]") {
			i, err := strconv.Atoi(seg[1 : len(seg)-1])
			if err == nil && n.Kind == yamlv3.SequenceNode && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
			} else if n.Kind == yamlv3.MappingNode {
				next = child(n, seg[1:len(seg)-1])
			}
		} else {
			next = child(n, seg)
		}
		if next == nil {
			break
		}
		n = next
		best = n.Line
	}
	return best
}

// child returns the value of key in mapping node n.
func child(n *yamlv3.Node, key string) *yamlv3.Node {
	if n == nil || n.Kind != yamlv3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
