package kubedefaults

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// apiEnums reads the typed string constants of k8s.io/api's source (the
// module in use, found with go list) and returns them by the reflect type
// of their named type among the kinds' types of s.
func apiEnums(s *runtime.Scheme) (map[reflect.Type][]string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/api").Output()
	if err != nil {
		return nil, fmt.Errorf("locating k8s.io/api: %w", err)
	}
	root := strings.TrimSpace(string(out))
	byName := map[string][]string{} // import path + "." + type name
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := "k8s.io/api/" + filepath.ToSlash(rel)
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				typ, ok := vs.Type.(*ast.Ident)
				if !ok {
					continue
				}
				for _, value := range vs.Values {
					lit, ok := value.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					if v, err := strconv.Unquote(lit.Value); err == nil {
						byName[pkg+"."+typ.Name] = append(byName[pkg+"."+typ.Name], v)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	enums := map[reflect.Type][]string{}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		if seen[t] {
			return
		}
		seen[t] = true
		switch t.Kind() {
		case reflect.String:
			if values := byName[t.PkgPath()+"."+t.Name()]; len(values) > 0 {
				enums[t] = values
			}
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(t.Elem())
		case reflect.Map:
			walk(t.Key())
			walk(t.Elem())
		case reflect.Struct:
			for i := range t.NumField() {
				walk(t.Field(i).Type)
			}
		}
	}
	for _, t := range s.AllKnownTypes() {
		walk(t)
	}
	return enums, nil
}
