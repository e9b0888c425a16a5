//go:build vapkit_gen

// Package openapicommon stands in for k8s.io/kube-openapi/pkg/common in the
// code openapi-gen writes. That package imports github.com/emicklei/go-restful,
// which vapkit's go.sum does not list; the generated definitions only need
// the four declarations below, which behave as kube-openapi's do.
package openapicommon

import "k8s.io/kube-openapi/pkg/validation/spec"

// ExtensionV2Schema is the extension under which a definition carries its
// OpenAPI v2 form.
const ExtensionV2Schema = "x-kubernetes-v2-schema"

// ReferenceCallback turns a definition name into a reference.
type ReferenceCallback func(path string) spec.Ref

// OpenAPIDefinition is one generated definition.
type OpenAPIDefinition struct {
	Schema       spec.Schema
	Dependencies []string
}

// EmbedOpenAPIDefinitionIntoV2Extension returns main with embedded's schema
// stored under [ExtensionV2Schema].
func EmbedOpenAPIDefinitionIntoV2Extension(main OpenAPIDefinition, embedded OpenAPIDefinition) OpenAPIDefinition {
	if main.Schema.Extensions == nil {
		main.Schema.Extensions = map[string]any{}
	}
	main.Schema.Extensions[ExtensionV2Schema] = embedded.Schema
	return main
}

// GenerateOpenAPIV3OneOfSchema returns one schema per type name, for oneOf.
func GenerateOpenAPIV3OneOfSchema(types []string) []spec.Schema {
	var out []spec.Schema
	for _, t := range types {
		out = append(out, spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{t}}})
	}
	return out
}
