package celenv

import (
	"github.com/google/cel-go/cel"

	"github.com/vapkit/vapkit/internal/celbridge"
)

// init gives the harnesses their access to the cel-go environments.
func init() {
	celbridge.Env = func(env any, newExpressions, params, authorizer bool) *cel.Env {
		mode := StoredExpressions
		if newExpressions {
			mode = NewExpressions
		}
		return env.(*Env).celEnv(mode, params, authorizer)
	}
	celbridge.ProgramOptions = func(env any) []cel.ProgramOption { return env.(*Env).programOptions() }
	celbridge.CheckFrequency = checkFrequency
}
