package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Document is one object read from a manifest.
type Document struct {
	// Index is the 1-based number of the document in the file. Documents that
	// hold only comments or whitespace are counted but not returned. Every item
	// of a List document shares the List's Index.
	Index int
	// Item is the 1-based position of the object within the items of a List
	// document, or 0 when the document is not a List.
	Item int
	// Line is the 1-based line where the object's content starts (after any
	// leading comments).
	Line int
	// Object is the decoded object; see the package documentation for the
	// concrete types.
	Object runtime.Object

	loc    locator   // finds field paths in the document's text
	prefix fieldPath // path of the object in its document (items[i] of a List)
}

// Locate returns the 1-based line of the field at path inside the object,
// e.g. "spec.validations[0].expression", or the line where the object starts
// when the field cannot be found (a defaulted field, a path of a converted
// version). Paths are written as Kubernetes prints them; a bracketed part
// that is not a number is a map key ("metadata.labels[app]").
func (d Document) Locate(path string) int {
	if d.loc == nil || path == "" {
		return d.Line
	}
	full := append(append(fieldPath{}, d.prefix...), parseFieldPath(path)...)
	// Walk up until some prefix of the path is found.
	for n := len(full); n > len(d.prefix); n-- {
		if line := d.loc.locate(full[:n], false); line > 0 {
			return line
		}
	}
	return d.Line
}

// Error describes a document that could not be decoded. Decode returns it
// (alone, or joined with others by [errors.Join]); use [errors.As] to
// inspect it.
type Error struct {
	// File is the file name given to Decode, or "" when none was given.
	File string
	// Line is the line of the offending field when it could be located,
	// otherwise the line where the document starts.
	Line int
	// Document is the 1-based document number in the file.
	Document int
	// Item is the 1-based position within a List document's items, or 0.
	Item int
	// Kind and Name identify the object when they could be read.
	Kind, Name string
	// Path is the field path of the problem, e.g.
	// "spec.validations[0].expression", or "" when it concerns the whole
	// document. For a List item it is relative to the item.
	Path string
	// Err is the underlying problem.
	Err error
}

// Error renders the problem as "file:line: document N (kind/name): message".
func (e *Error) Error() string {
	var b strings.Builder
	file := e.File
	if file == "" {
		file = "<input>"
	}
	fmt.Fprintf(&b, "%s:%d: document %d", file, e.Line, e.Document)
	if e.Item > 0 {
		fmt.Fprintf(&b, ", item %d", e.Item)
	}
	switch {
	case e.Kind != "" && e.Name != "":
		fmt.Fprintf(&b, " (%s/%s)", e.Kind, e.Name)
	case e.Kind != "":
		fmt.Fprintf(&b, " (%s)", e.Kind)
	}
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying problem.
func (e *Error) Unwrap() error { return e.Err }

// maxErrors bounds how many document errors Decode reports, so that a huge
// broken file yields a readable message.
const maxErrors = 10

// Options adjust [DecodeWith].
type Options struct {
	// Strict decodes every object of a kind that k8s.io/api defines (a
	// Deployment, a ConfigMap, ...) strictly into its Go type, as the API
	// server does with strict field validation (kubectl apply's default),
	// so that an unknown field ("spec.replica") or a value of the wrong
	// JSON type is an error. The object itself is still returned as
	// unstructured. The objects of an AdmissionReview request (object and
	// oldObject) are checked the same way, under the kind they name or, if
	// they name none, the request's kind.
	Strict bool
}

// DecodeFile reads the file at path and decodes it with [Decode], using path
// as the file name in errors.
func DecodeFile(path string) ([]Document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(data, path)
}

// Decode reads every document of data, which is multi-document YAML
// (separated by "---" lines) or JSON (one object, a List, or several
// concatenated objects). filename is used only in error messages.
//
// On failure Decode returns no documents and an error that names each broken
// document (up to ten) as "file:line: document N (kind/name): problem"; the
// individual errors are [*Error] values.
func Decode(data []byte, filename string) ([]Document, error) {
	return DecodeWith(data, filename, Options{})
}

// DecodeWith is [Decode] with options.
func DecodeWith(data []byte, filename string, o Options) ([]Document, error) {
	d := &decoder{file: filename, lines: newLineIndex(data), strict: o.Strict}
	if looksLikeJSON(data) && !hasSeparatorLine(data) {
		if ok := d.decodeJSONStream(data); ok {
			return d.result()
		}
		// The first value is not JSON: the file may still be YAML written in
		// flow style, so start over as YAML.
		d.docs, d.errs, d.truncated = nil, nil, false
	}
	d.decodeYAMLStream(data)
	return d.result()
}

// decoder holds the state of one Decode call.
type decoder struct {
	file      string
	lines     *lineIndex
	docs      []Document
	errs      []error
	truncated bool // maxErrors was reached and decoding stopped
	strict    bool // Options.Strict
}

func (d *decoder) result() ([]Document, error) {
	if len(d.errs) == 0 {
		if d.docs == nil {
			d.docs = []Document{}
		}
		return d.docs, nil
	}
	errs := d.errs
	if d.truncated {
		errs = append(errs, fmt.Errorf("too many errors; later documents were not checked"))
	}
	if len(errs) == 1 {
		return nil, errs[0]
	}
	return nil, errors.Join(errs...)
}

func (d *decoder) fail(e *Error) {
	e.File = d.file
	d.errs = append(d.errs, e)
}

// full reports whether enough errors were collected to stop, and notes that
// decoding stopped early.
func (d *decoder) full() bool {
	if len(d.errs) >= maxErrors {
		d.truncated = true
		return true
	}
	return false
}

// looksLikeJSON reports whether the first significant byte opens a JSON
// object or array.
func looksLikeJSON(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for _, b := range data {
		if isSpace(b) {
			continue
		}
		return b == '{' || b == '['
	}
	return false
}

// hasSeparatorLine reports whether data has a YAML document separator line,
// which no JSON stream can contain: JSON strings hold no raw newlines.
func hasSeparatorLine(data []byte) bool {
	for off := 0; off < len(data); {
		i := bytes.Index(data[off:], []byte("---"))
		if i < 0 {
			return false
		}
		at := off + i
		if at == 0 || data[at-1] == '\n' {
			end := bytes.IndexByte(data[at:], '\n')
			if end < 0 {
				end = len(data) - at
			}
			if sep, _ := separator(data[at : at+end]); sep {
				return true
			}
		}
		off = at + 3
	}
	return false
}

// decodeJSONStream decodes a stream of concatenated JSON values. It returns
// false, having recorded nothing, when the very first value is not valid
// JSON, so that the caller can retry the input as YAML.
func (d *decoder) decodeJSONStream(data []byte) bool {
	start := 0
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		start = 3
	}
	dec := json.NewDecoder(bytes.NewReader(data[start:]))
	for index := 1; ; index++ {
		// Find where the next value starts, for its line number.
		off := start + int(dec.InputOffset())
		for off < len(data) && isSpace(data[off]) {
			off++
		}
		if off >= len(data) {
			return true
		}
		if d.full() {
			return true
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if index == 1 {
				return false
			}
			d.fail(&Error{Line: d.jsonErrorLine(data, off, err), Document: index, Err: fmt.Errorf("invalid JSON: %s", cleanJSONError(err))})
			return true
		}
		src := &docSource{index: index, line: d.lines.line(off)}
		src.loc = &jsonLocator{src: raw, start: off, lines: d.lines}
		d.document(raw, src)
	}
}

// jsonErrorLine finds the line of a JSON syntax error in the value that
// starts at off, by decoding that value alone so that the offset is known.
func (d *decoder) jsonErrorLine(data []byte, off int, err error) int {
	var syn *json.SyntaxError
	probe := json.NewDecoder(bytes.NewReader(data[off:]))
	var raw json.RawMessage
	if perr := probe.Decode(&raw); errors.As(perr, &syn) {
		return d.lines.line(off + int(syn.Offset) - 1)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return d.lines.line(len(data) - 1)
	}
	return d.lines.line(off)
}

// segment is the text of one YAML document.
type segment struct {
	text      []byte
	firstLine int // file line of text[0]
	content   int // file line of the first line that is not blank or a comment; 0 if none
}

// splitYAML cuts data at document separators: lines that start with "---"
// followed by nothing, whitespace or a comment. A separator followed by
// content ("--- {a: 1}") starts the next document with that line. Text
// before the first separator that holds no content is a header, not a
// document, as in YAML itself.
func splitYAML(data []byte) []segment {
	var segs []segment
	cur := segment{firstLine: 1}
	curStart := 0
	line := 1
	sawSeparator := false
	for off := 0; off < len(data); line++ {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			next = off + end + 1
		}
		l := data[off:next]
		if sep, inline := separator(l); sep {
			cur.text = data[curStart:off]
			segs = append(segs, cur)
			sawSeparator = true
			cur = segment{firstLine: line + 1}
			curStart = next
			if inline {
				cur.firstLine = line
				cur.content = line
				curStart = off
			}
		} else if cur.content == 0 && hasContent(l) {
			cur.content = line
		}
		off = next
	}
	cur.text = data[curStart:]
	segs = append(segs, cur)
	if sawSeparator && segs[0].content == 0 {
		segs = segs[1:]
	}
	return segs
}

// separator reports whether line is a document separator and whether it
// carries document content after the marker.
func separator(line []byte) (sep, inline bool) {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false, false
	}
	rest := line[3:]
	if len(rest) > 0 && !isSpace(rest[0]) {
		return false, false // "---foo" is a plain scalar
	}
	rest = bytes.TrimSpace(rest)
	return true, len(rest) > 0 && rest[0] != '#'
}

// hasContent reports whether a line holds more than whitespace or a comment.
func hasContent(line []byte) bool {
	t := bytes.TrimSpace(bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")))
	return len(t) > 0 && t[0] != '#'
}

func (d *decoder) decodeYAMLStream(data []byte) {
	for i, seg := range splitYAML(data) {
		index := i + 1
		if seg.content == 0 {
			continue // only comments and whitespace
		}
		if d.full() {
			return
		}
		j, err := yaml.YAMLToJSONStrict(seg.text)
		if err != nil {
			line, msg := yamlErrorLine(err)
			e := &Error{Line: seg.content, Document: index, Err: errors.New(msg)}
			if line > 0 {
				e.Line = seg.firstLine + line - 1
			}
			d.fail(e)
			continue
		}
		src := &docSource{index: index, line: seg.content}
		src.loc = &yamlLocator{src: seg.text, firstLine: seg.firstLine}
		d.document(j, src)
	}
}

// yamlLinePattern matches the "line N: msg" parts of go-yaml errors, e.g.
// "yaml: line 3: did not find expected key" or, for strict mode,
// "yaml: unmarshal errors:\n  line 4: key \"c\" already set in map".
var yamlLinePattern = regexp.MustCompile(`line (\d+): (.*)`)

// yamlErrorLine extracts the first line number (relative to the document)
// and message from a go-yaml error; the line is 0 when there is none.
func yamlErrorLine(err error) (int, string) {
	msg := err.Error()
	m := yamlLinePattern.FindStringSubmatch(msg)
	if m == nil {
		return 0, "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")
	}
	n, convErr := strconv.Atoi(m[1])
	if convErr != nil {
		return 0, "invalid YAML: " + msg
	}
	return n, "invalid YAML: " + m[2]
}
