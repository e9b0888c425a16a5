package celenv

import (
	"github.com/google/cel-go/cel"

	"github.com/vapkit/vapkit/internal/patchtypes"
)

// compileEnv returns the environment for an expression declaring d: the
// scope's environment, extended with the mutation types when d.PatchTypes
// is set. Extensions are built once per environment they extend.
func (s *Scope) compileEnv(d Decls) (*cel.Env, error) {
	env, err := s.celEnv(d.Authorizer)
	if err != nil || !d.PatchTypes {
		return env, err
	}
	if ext, ok := s.patchEnvs[env]; ok {
		return ext, nil
	}
	ext, err := env.Extend(patchtypes.EnvOption())
	if err != nil {
		return nil, err
	}
	if s.patchEnvs == nil {
		s.patchEnvs = map[*cel.Env]*cel.Env{}
	}
	s.patchEnvs[env] = ext
	return ext, nil
}
