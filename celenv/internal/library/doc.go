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
// is a global function, and a quantity returned by add or sub cannot be the
// right operand of == (no such overload).
//
// # Where each behaviour comes from
//
// vapkit may not import k8s.io/apiserver, so the glue of each library (its
// declarations, argument checks, error texts and costs) is re-implemented
// after apiserver's pkg/cel/library. Wherever apiserver delegates the
// behaviour itself to another package, vapkit calls that same package, so
// that every accepted and rejected input is upstream's by construction:
//
//   - semantic versions ([Semver]): parsing, printing and ordering are
//     github.com/blang/semver/v4 (Parse, Version.Compare), as apiserver's
//     pkg/cel/semver.go; only the lenient normalization of semver(s, true)
//     is apiserver's own code (semverlib.go normalizeAndParse), reproduced.
//   - quantities ([Quantity]): k8s.io/apimachinery pkg/api/resource
//     (ParseQuantity and the Quantity methods).
//   - named formats ([Format]): the DNS label, subdomain and RFC 1035 checks,
//     with and without the generated-name prefix, are k8s.io/apimachinery
//     pkg/api/validation NameIsDNSLabel, NameIsDNSSubdomain and
//     NameIsDNS1035Label; qualifiedName and labelValue are
//     pkg/util/validation IsQualifiedName and IsValidLabelValue; uuid, byte,
//     date and datetime are k8s.io/kube-openapi pkg/validation/strfmt; uri
//     is net/url ParseRequestURI.
//   - IP addresses and CIDRs ([IP], [CIDR]): net/netip, with apiserver's own
//     rules on top (no IPv4-mapped IPv6 addresses, no zones), reproduced.
//   - URLs ([URLs]): net/url ParseRequestURI and the url.URL accessors.
//   - regular expressions ([Regex]): Go's regexp (RE2), as cel-go's matches.
//   - lists ([Lists]): apiserver's own code (pkg/cel/library/lists.go),
//     reproduced; no other package is involved.
//   - costs ([CostEstimator]): apiserver's pkg/cel/library/cost.go figures,
//     reproduced.
//
// # Concurrency
//
// The package holds no mutable state; every option and value is safe for
// concurrent use.
package library
