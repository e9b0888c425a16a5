package celenv

import (
	"testing"

	"github.com/google/cel-go/cel"
)

// TestAuthzLibrariesSingletons checks that both authorizer libraries may
// be added twice, as upstream's.
func TestAuthzLibrariesSingletons(t *testing.T) {
	if _, err := cel.NewEnv(authzLibrary(), authzLibrary(), authzSelectorsLibrary(), authzSelectorsLibrary()); err != nil {
		t.Errorf("cel.NewEnv(authz libraries twice) = %v, want nil", err)
	}
}
