package typecheck

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// UncheckedKind is a kind a policy matches that [Checker.Check] could not
// type-check, with the reason.
type UncheckedKind struct {
	// GVK is the kind, as the checker's KindMapper named it.
	GVK schema.GroupVersionKind
	// Err is the resolver's error; it wraps [ErrSchemaNotFound] when the
	// resolver does not know the kind.
	Err error
}

// Unchecked lists, in the order [Checker.Check] visits them, the kinds p's
// spec.matchConstraints.resourceRules name for which c's resolver returns
// no schema, so that Check silently leaves their expressions unchecked, as
// the API server does for kinds its resolvers cannot serve. With the
// default schemas and resources every served kind has a schema and the
// result is empty; a custom resource is listed unless its
// CustomResourceDefinition is in Options.CRDs or Options.Schemas knows it.
// With Options.CRDs, the kinds are those of the second, extended pass.
//
// Callers who want to know that the warnings are complete check that the
// result is empty; a nil p gives nil.
func (c *Checker) Unchecked(p *admissionregistrationv1.ValidatingAdmissionPolicy) []UncheckedKind {
	if p == nil {
		return nil
	}
	if c.extended != nil {
		c = c.extended
	}
	var out []UncheckedKind
	for _, gvk := range typesToCheck(p, c.kinds) {
		s, err := c.resolver.ResolveSchema(gvk)
		if err == nil && s != nil {
			continue
		}
		if err == nil {
			err = ErrSchemaNotFound
		}
		out = append(out, UncheckedKind{GVK: gvk, Err: err})
	}
	return out
}
