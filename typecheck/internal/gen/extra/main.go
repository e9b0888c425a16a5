//go:build ignore

// Command extra prints, as JSON on standard output, the OpenAPI definitions
// of the API groups a kube-apiserver serves from outside k8s.io/api:
// apiextensions.k8s.io (k8s.io/apiextensions-apiserver) and
// apiregistration.k8s.io (k8s.io/kube-aggregator), taken from the
// GetOpenAPIDefinitions those modules generate and serve themselves, with
// the kinds of both groups mapped to their definition names.
//
// It needs modules vapkit does not require, so ../main.go copies it into a
// temporary module of its own and runs it there; the `ignore` build
// constraint keeps `go mod tidy` of vapkit from following its imports.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	apiextensionsopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationv1beta1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1beta1"
	aggregatoropenapi "k8s.io/kube-aggregator/pkg/generated/openapi"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

type kindEntry struct {
	Group      string `json:"group"`
	Version    string `json:"version"`
	Kind       string `json:"kind"`
	Definition string `json:"definition"`
}

type file struct {
	Kinds       []kindEntry            `json:"kinds"`
	Definitions map[string]spec.Schema `json:"definitions"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "extra:", err)
		os.Exit(1)
	}
}

func run() error {
	f := file{Definitions: map[string]spec.Schema{}}
	for _, get := range []func(common.ReferenceCallback) map[string]common.OpenAPIDefinition{
		apiextensionsopenapi.GetOpenAPIDefinitions,
		aggregatoropenapi.GetOpenAPIDefinitions,
	} {
		for name, def := range get(spec.MustCreateRef) {
			f.Definitions[name] = def.Schema
		}
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		apiextensionsv1.AddToScheme, apiextensionsv1beta1.AddToScheme,
		apiregistrationv1.AddToScheme, apiregistrationv1beta1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	for gvk := range scheme.AllKnownTypes() {
		if gvk.Group != apiextensionsv1.GroupName && gvk.Group != apiregistrationv1.GroupName {
			continue // meta types registered alongside, known from k8s.io/api
		}
		name, err := scheme.ToOpenAPIDefinitionName(gvk)
		if err != nil {
			return fmt.Errorf("%v: %w", gvk, err)
		}
		if _, ok := f.Definitions[name]; ok {
			f.Kinds = append(f.Kinds, kindEntry{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Definition: name})
		}
	}
	return json.NewEncoder(os.Stdout).Encode(&f)
}
