//go:build vapkit_gen

// Command dump writes the definitions that openapi-gen produced into the
// temporary openapitmp package as the compact, gzip-compressed JSON that
// package typecheck embeds. It is run by ../main.go.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/typecheck/internal/gen/openapitmp"
)

// kindEntry maps one group/version/kind to its definition.
type kindEntry struct {
	Group      string `json:"group"`
	Version    string `json:"version"`
	Kind       string `json:"kind"`
	Definition string `json:"definition"`
}

type file struct {
	Kinds       []kindEntry                `json:"kinds"`
	Definitions map[string]json.RawMessage `json:"definitions"`
}

func main() {
	out := flag.String("o", "schemas.json.gz", "output file")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "dump:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	defs := openapitmp.GetOpenAPIDefinitions(spec.MustCreateRef)
	f := file{Definitions: make(map[string]json.RawMessage, len(defs))}
	for name, def := range defs {
		s := def.Schema
		strip(&s)
		b, err := json.Marshal(&s)
		if err != nil {
			return fmt.Errorf("definition %s: %w", name, err)
		}
		f.Definitions[name] = b
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
		f.Kinds = append(f.Kinds, kindEntry{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Definition: name})
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
	data, err := json.Marshal(&f) // map keys are sorted: the output is deterministic
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
	fmt.Printf("%d definitions, %d kinds, %d bytes JSON, %d bytes compressed\n", len(f.Definitions), len(f.Kinds), len(data), buf.Len())
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// strip removes what type checking never reads: documentation, defaults,
// examples and extensions other than the x-kubernetes-* schema markers.
func strip(s *spec.Schema) {
	if s == nil {
		return
	}
	s.Description = ""
	s.Title = ""
	s.Default = nil
	s.Example = nil
	s.ExternalDocs = nil
	s.ID = ""
	s.Schema = ""
	for k := range s.Extensions {
		if !keepExtension(k) {
			delete(s.Extensions, k)
		}
	}
	if len(s.Extensions) == 0 {
		s.Extensions = nil
	}
	for k, p := range s.Properties {
		strip(&p)
		s.Properties[k] = p
	}
	if s.Items != nil {
		strip(s.Items.Schema)
		for i := range s.Items.Schemas {
			strip(&s.Items.Schemas[i])
		}
	}
	if s.AdditionalProperties != nil {
		strip(s.AdditionalProperties.Schema)
	}
	for _, l := range [][]spec.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range l {
			strip(&l[i])
		}
	}
	strip(s.Not)
}

func keepExtension(k string) bool {
	switch strings.ToLower(k) {
	case "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
		"x-kubernetes-int-or-string", "x-kubernetes-embedded-resource",
		"x-kubernetes-preserve-unknown-fields", "x-kubernetes-unions":
		return true
	}
	return false
}
