package defaulting

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
)

// Register adds to s the defaulting function of every built-in kind vapkit
// defaults. s must already know the kinds' types.
//
// Every other kind s knows gets a function that does nothing. k8s.io/api's
// scheme builders are shared: a package that adds defaulting functions to
// them (k8s.io/kubernetes pkg/apis/GROUP/VERSION does, in a program that
// imports it) would otherwise have its functions run as vapkit's whenever
// s was built with the groups' AddToScheme. Register therefore decides
// alone what s defaults.
func Register(s *runtime.Scheme) {
	for _, typ := range s.AllKnownTypes() {
		if obj, ok := reflect.New(typ).Interface().(runtime.Object); ok {
			s.AddTypeDefaultingFunc(obj, func(any) {})
		}
	}
	for _, add := range coreRegistrations {
		add(s)
	}
	for _, add := range groupRegistrations {
		add(s)
	}
}
