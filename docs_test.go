package vapkit_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExportedNamesDocumented fails, naming file:line, for an exported
// name of a public library package without a doc comment: package-level
// functions, types, constants and variables (a comment on their group
// counts), and exported methods of exported types.
func TestExportedNamesDocumented(t *testing.T) {
	fset := token.NewFileSet()
	for _, path := range libraryFiles(t) {
		if isInternalPath(path) {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, missing := range undocumented(f) {
			t.Errorf("%s: exported %s has no doc comment", fset.Position(missing.Pos()), missing.Name)
		}
	}
}

// isInternalPath reports whether a file belongs to an internal package,
// which users cannot import.
func isInternalPath(path string) bool {
	dir := filepath.ToSlash(filepath.Dir(path))
	return dir == "internal" || strings.HasPrefix(dir, "internal/") || strings.Contains(dir, "/internal")
}

// undocumented returns the identifiers of f's exported declarations that
// carry no doc comment.
func undocumented(f *ast.File) []*ast.Ident {
	var out []*ast.Ident
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Doc != nil {
				continue
			}
			if d.Recv == nil || exportedReceiver(d.Recv) {
				out = append(out, d.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				for _, name := range specNames(spec) {
					if name.IsExported() && d.Doc == nil && specDoc(spec) == nil {
						out = append(out, name)
					}
				}
			}
		}
	}
	return out
}

func exportedReceiver(recv *ast.FieldList) bool {
	t := recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if idx, ok := t.(*ast.IndexExpr); ok {
		t = idx.X
	}
	if idx, ok := t.(*ast.IndexListExpr); ok {
		t = idx.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

func specNames(spec ast.Spec) []*ast.Ident {
	switch s := spec.(type) {
	case *ast.TypeSpec:
		return []*ast.Ident{s.Name}
	case *ast.ValueSpec:
		return s.Names
	}
	return nil
}

func specDoc(spec ast.Spec) *ast.CommentGroup {
	switch s := spec.(type) {
	case *ast.TypeSpec:
		return s.Doc
	case *ast.ValueSpec:
		if s.Doc != nil {
			return s.Doc
		}
		return s.Comment
	}
	return nil
}

// TestEveryPackageHasExample fails for a public library package whose
// tests hold no runnable Example function (the module's doc-only root
// package aside).
func TestEveryPackageHasExample(t *testing.T) {
	dirs := map[string]bool{}
	for _, path := range libraryFiles(t) {
		if dir := filepath.Dir(path); dir != "." && !isInternalPath(path) {
			dirs[dir] = false
		}
	}
	for dir := range dirs {
		tests, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, path := range tests {
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Example") {
					dirs[dir] = true
				}
			}
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(dirs)) {
		if !dirs[dir] {
			t.Errorf("package %s has no Example function in its tests", dir)
		}
	}
}
