package celenv

import "github.com/google/cel-go/cel"

// AuthzLibraries are the authorizer libraries alone, for tests that
// compare them with upstream's library tests: authorizer and
// authorizer.requestResource declared, and the selectors when selectors is
// set.
func AuthzLibraries(selectors bool) []cel.EnvOption {
	opts := []cel.EnvOption{authzLibrary(),
		cel.Variable(authorizerVar, authorizerType),
		cel.Variable(requestResourceVar, resourceCheckType)}
	if selectors {
		opts = append(opts, authzSelectorsLibrary())
	}
	return opts
}
