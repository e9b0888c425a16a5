// Package library implements the Kubernetes CEL function libraries that
// ValidatingAdmissionPolicy expressions can call: URLs, regular expressions,
// lists, IP addresses and CIDRs, quantities, semantic versions and named
// formats, plus the runtime cost figures the API server charges for them.
//
// Each library is a [cel.EnvOption] built from a [cel.Library] value with the
// name apiserver registers it under, so adding the same library twice to an
// environment is harmless:
//
//	env, err := cel.NewEnv(cel.OptionalTypes(), library.Quantity(), library.Format())
//	// quantity("1Gi").isGreaterThan(quantity("1G"))
//	// format.dns1123Label().validate(object.metadata.name).hasValue()
//
// # Compatibility
//
// Function names, overload IDs, CEL type names (kubernetes.Quantity,
// kubernetes.Semver, kubernetes.NamedFormat, ...) and error texts match
// k8s.io/apiserver v0.37.2 pkg/cel/library, including its rough edges: sign
// is a global function, a quantity returned by add or sub cannot be the right
// operand of == (no such overload), and semantic versions follow
// github.com/blang/semver/v4, reimplemented here.
//
// # Concurrency
//
// The package holds no mutable state; every option and value is safe for
// concurrent use.
package library
