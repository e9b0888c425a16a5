package vapkit_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Shape limits of the library's hand-written code: a file over maxFileLines
// holds more than one concept, a function over maxFuncLines more than one
// step. Tests, generated files, examples/ and conformance/ are not library.
const (
	maxFileLines = 600
	maxFuncLines = 80
)

// shapeAllowed lists library code that still exceeds the limits, as
// "path" for a file and "path:Func" or "path:Recv.Func" for a function,
// with the reason. Entries only shrink: an entry that no longer exceeds a
// limit fails the test until it is removed.
var shapeAllowed = map[string]string{}

// generated matches the header of generated Go files
// (https://go.dev/s/generatedcode).
var generated = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

// notLibrary are the top-level directories that are not library code.
var notLibrary = []string{"examples", "conformance"}

// TestShape fails, naming file:line, for a library file over maxFileLines
// or a library function over maxFuncLines that shapeAllowed does not list.
// It parses the sources only, so it runs in -short mode too.
func TestShape(t *testing.T) {
	files := libraryFiles(t)
	if !slices.Contains(files, "doc.go") || !slices.Contains(files, "policy/evaluate.go") {
		t.Fatalf("library files %v lack doc.go or policy/evaluate.go: is the test running at the module root?", files)
	}
	over := map[string]string{} // allow-list key -> violation
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := shapeViolations(path, src)
		if err != nil {
			t.Fatal(err)
		}
		maps.Copy(over, vs)
	}
	for _, key := range slices.Sorted(maps.Keys(over)) {
		if _, ok := shapeAllowed[key]; ok {
			continue
		}
		t.Error(over[key])
	}
	for _, key := range slices.Sorted(maps.Keys(shapeAllowed)) {
		if _, ok := over[key]; !ok {
			t.Errorf("%s is within the limits now: remove it from shapeAllowed", key)
		}
	}
}

// libraryFiles returns the non-test Go files of the library, walking from
// the module root and skipping nested modules, testdata, examples/ and
// conformance/.
func libraryFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path == "." {
				return nil
			}
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" ||
				slices.Contains(notLibrary, filepath.ToSlash(path)) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// shapeViolations returns the limits the file at path, holding src,
// exceeds, keyed as in shapeAllowed; a generated file has none.
func shapeViolations(path string, src []byte) (map[string]string, error) {
	if isGenerated(src) {
		return nil, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
		out[path] = fmt.Sprintf("%s:1: file has %d lines, over %d: split it by concept", path, n, maxFileLines)
	}
	check := func(name string, from, to token.Pos) {
		start, end := fset.Position(from), fset.Position(to)
		if n := end.Line - start.Line + 1; n > maxFuncLines {
			out[path+":"+name] = fmt.Sprintf("%s:%d: function %s has %d lines, over %d: split it into named steps",
				path, start.Line, name, n, maxFuncLines)
		}
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			check(funcName(fd), fd.Pos(), fd.End())
			continue
		}
		// Function literals outside functions, as in var x = func() {...}.
		ast.Inspect(d, func(n ast.Node) bool {
			if fl, ok := n.(*ast.FuncLit); ok {
				check("func literal", fl.Pos(), fl.End())
				return false
			}
			return true
		})
	}
	return out, nil
}

// isGenerated reports whether src has the generated-code header before its
// package clause.
func isGenerated(src []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "package ") {
			return false
		}
		if generated.MatchString(line) {
			return true
		}
	}
	return false
}

// funcName names fd as Func or Recv.Func.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr:
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}

// TestShapeViolations checks that the checker of TestShape finds what it
// must and only that.
func TestShapeViolations(t *testing.T) {
	body := func(n int) string { return strings.Repeat("\tx++\n", n) }
	long := "package p\n\nvar x int\n\n// f is long.\nfunc f() {\n" + body(maxFuncLines-2) + "}\n\n" +
		"type T struct{}\n\nfunc (*T) m() {\n" + body(maxFuncLines-1) + "}\n\n" +
		"var g = func() {\n" + body(maxFuncLines-1) + "}\n"
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"within limits", "package p\n\nfunc f() {\n" + body(maxFuncLines-2) + "}\n", nil},
		{"long functions", long, []string{
			// f, at line 6, has exactly maxFuncLines.
			"p.go:171: function func literal has 81 lines, over 80: split it into named steps",
			"p.go:89: function T.m has 81 lines, over 80: split it into named steps",
		}},
		{"long file", "package p\n" + strings.Repeat("\n", maxFileLines), []string{
			"p.go:1: file has 601 lines, over 600: split it by concept",
		}},
		{"generated", "// Code generated by gen; DO NOT EDIT.\n\n" + long, nil},
		{"generated marker after package clause", "package p\n\n// Code generated by gen; DO NOT EDIT.\n" +
			"func f() {\n" + body(maxFuncLines-1) + "}\n", []string{
			"p.go:4: function f has 81 lines, over 80: split it into named steps",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs, err := shapeViolations("p.go", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Sorted(maps.Values(vs))
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
