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
	out := flag.String("o", "schemas.json.gz", "output file for k8s.io/api's definitions")
	extra := flag.String("extra", "", "JSON file of further kinds and definitions (see ../extra)")
	extraOut := flag.String("extra-o", "schemas_extra.json", "output file for the definitions of -extra")
	flag.Parse()
	if err := run(*out, *extra, *extraOut); err != nil {
		fmt.Fprintln(os.Stderr, "dump:", err)
		os.Exit(1)
	}
}

// run writes two files of the same format: out, gzip-compressed, with
// k8s.io/api's definitions, and extraOut, plain JSON with one definition per
// line, with the definitions of extraFile that k8s.io/api does not have.
// The second is text so that it can be reviewed and diffed; it is small.
func run(out, extraFile, extraOut string) error {
	defs := openapitmp.GetOpenAPIDefinitions(spec.MustCreateRef)
	schemas := make(map[string]spec.Schema, len(defs))
	for name, def := range defs {
		schemas[name] = def.Schema
	}
	main := file{}
	var err error
	if main.Definitions, err = stripAll(schemas); err != nil {
		return err
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
		if _, ok := schemas[name]; !ok {
			continue
		}
		main.Kinds = append(main.Kinds, kindEntry{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Definition: name})
	}
	sortKinds(main.Kinds)
	data, err := json.Marshal(&main) // map keys are sorted: the output is deterministic
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
	fmt.Printf("%s: %d definitions, %d kinds, %d bytes JSON, %d bytes compressed\n", out, len(main.Definitions), len(main.Kinds), len(data), buf.Len())
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	if extraFile == "" {
		return nil
	}

	var extra struct {
		Kinds       []kindEntry            `json:"kinds"`
		Definitions map[string]spec.Schema `json:"definitions"`
	}
	raw, err := os.ReadFile(extraFile)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &extra); err != nil {
		return fmt.Errorf("%s: %w", extraFile, err)
	}
	// Definitions k8s.io/api already has (meta, autoscaling/v1 Scale) keep
	// the form k8s.io/api generates.
	for name := range extra.Definitions {
		if _, ok := schemas[name]; ok {
			delete(extra.Definitions, name)
		}
	}
	defsOut, err := stripAll(extra.Definitions)
	if err != nil {
		return err
	}
	sortKinds(extra.Kinds)
	text, err := lines(file{Kinds: extra.Kinds, Definitions: defsOut})
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d definitions, %d kinds, %d bytes JSON\n", extraOut, len(defsOut), len(extra.Kinds), len(text))
	return os.WriteFile(extraOut, text, 0o644)
}

// stripAll strips and encodes every schema.
func stripAll(schemas map[string]spec.Schema) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(schemas))
	for name, s := range schemas {
		strip(&s)
		b, err := json.Marshal(&s)
		if err != nil {
			return nil, fmt.Errorf("definition %s: %w", name, err)
		}
		out[name] = b
	}
	return out, nil
}

// lines encodes f as JSON with one kind and one definition per line, in
// sorted order.
func lines(f file) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{\"kinds\":[")
	for i, k := range f.Kinds {
		e, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n")
		b.Write(e)
	}
	b.WriteString("\n],\"definitions\":{")
	names := make([]string, 0, len(f.Definitions))
	for name := range f.Definitions {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		n, err := json.Marshal(name)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n")
		b.Write(n)
		b.WriteByte(':')
		b.Write(f.Definitions[name])
	}
	b.WriteString("\n}}\n")
	return b.Bytes(), nil
}

func sortKinds(l []kindEntry) {
	sort.Slice(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Kind < b.Kind
	})
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
