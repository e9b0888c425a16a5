//go:build vapkit_gen

// Command dump converts the definitions that openapi-gen produced into the
// temporary openapitmp package to a structured-merge-diff schema, with
// kube-openapi's schemaconv as the API server's type converters do, and
// writes it as the compressed YAML, in base64, that package mutation
// embeds. It is run
// by ../main.go.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v2"
	"k8s.io/kube-openapi/pkg/schemaconv"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/internal/mutation/internal/gen/openapitmp"
)

// kindEntry maps one group/version/kind to its type.
type kindEntry struct {
	Group   string `yaml:"group,omitempty"`
	Version string `yaml:"version"`
	Kind    string `yaml:"kind"`
	Type    string `yaml:"type"`
}

type file struct {
	Kinds  []kindEntry      `yaml:"kinds"`
	Schema smdschema.Schema `yaml:"schema"`
}

func main() {
	out := flag.String("o", "smd.yaml.gz.b64", "output file")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "dump:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	defs := openapitmp.GetOpenAPIDefinitions(spec.MustCreateRef)
	models := make(map[string]*spec.Schema, len(defs))
	for name, def := range defs {
		s := def.Schema
		models[name] = &s
	}
	s, err := schemaconv.ToSchemaFromOpenAPI(models, false)
	if err != nil {
		return err
	}
	f := file{Schema: *s}
	sort.Slice(f.Schema.Types, func(i, j int) bool { return f.Schema.Types[i].Name < f.Schema.Types[j].Name })
	for i := range f.Schema.Types {
		compact(&f.Schema.Types[i].Atom)
	}
	scheme := builtin.Scheme()
	for gvk := range scheme.AllKnownTypes() {
		if gvk.Version == "__internal" {
			continue
		}
		name, err := scheme.ToOpenAPIDefinitionName(gvk)
		if err != nil {
			return fmt.Errorf("%v: %w", gvk, err)
		}
		if _, ok := defs[name]; !ok {
			continue
		}
		f.Kinds = append(f.Kinds, kindEntry{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Type: name})
	}
	sort.Slice(f.Kinds, func(i, j int) bool {
		a, b := f.Kinds[i], f.Kinds[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Kind < b.Kind
	})
	data, err := yaml.Marshal(&f)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	// Base64 in lines of 76 characters keeps the file text, as the
	// repository's tooling requires.
	enc := base64.StdEncoding.EncodeToString(buf.Bytes())
	var txt strings.Builder
	for len(enc) > 76 {
		txt.WriteString(enc[:76] + "\n")
		enc = enc[76:]
	}
	txt.WriteString(enc + "\n")
	fmt.Printf("%d types, %d kinds, %d bytes YAML, %d bytes compressed\n", len(f.Schema.Types), len(f.Kinds), len(data), buf.Len())
	return os.WriteFile(out, []byte(txt.String()), 0o644)
}

// compact sorts struct fields by name (schemaconv emits them in map order)
// and drops defaults that are not scalars: structured-merge-diff reads a
// field's default only to key associative list items, whose keys are
// scalars.
func compact(a *smdschema.Atom) {
	if a.Map != nil {
		sort.Slice(a.Map.Fields, func(i, j int) bool { return a.Map.Fields[i].Name < a.Map.Fields[j].Name })
		for i := range a.Map.Fields {
			f := &a.Map.Fields[i]
			switch f.Default.(type) {
			case string, bool, int, int32, int64, float32, float64:
			default:
				f.Default = nil
			}
			compact(&f.Type.Inlined)
		}
		compact(&a.Map.ElementType.Inlined)
	}
	if a.List != nil {
		compact(&a.List.ElementType.Inlined)
	}
}
