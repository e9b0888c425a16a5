package celenv

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"

	"github.com/vapkit/vapkit/celenv/internal/library"
	"github.com/vapkit/vapkit/internal/celvalue"
)

// Cost limits of the API server (k8s.io/apiserver pkg/apis/cel/config.go).
const (
	// perCallLimit is the most one expression evaluation may cost.
	perCallLimit = 1_000_000
	// checkFrequency is how many comprehension iterations pass between two
	// checks for cancellation.
	checkFrequency = 100
)

// Names of the variables of the admission environment.
const (
	objectVar          = "object"
	oldObjectVar       = "oldObject"
	paramsVar          = "params"
	requestVar         = "request"
	namespaceVar       = "namespaceObject"
	authorizerVar      = "authorizer"
	requestResourceVar = "authorizer.requestResource"
	variablesVar       = "variables"
)

// Mode chooses between the two environments the API server keeps.
type Mode int

const (
	// StoredExpressions is the larger environment used to evaluate policies
	// that already exist: every library the server knows. Runtime evaluation
	// always uses it.
	StoredExpressions Mode = iota
	// NewExpressions is the environment used to validate expressions being
	// created: only libraries available one minor version earlier, so that a
	// rollback can still evaluate them.
	NewExpressions
)

// versionedOption is one entry of the API server's base environment: options
// introduced in one version and possibly removed in a later one.
type versionedOption struct {
	introduced, removed Version // removed 0: never
	env                 []cel.EnvOption
	program             []cel.ProgramOption
}

// baseOptions lists the base environment of Kubernetes 1.37, as
// k8s.io/apiserver pkg/cel/environment/base.go does. Versions before 1.30 are
// folded into 0 since vapkit supports 1.30 onwards. binary is the API
// server's version: where a library's behaviour changed between binaries
// (not which functions exist, which the entries' versions decide), the
// entry holds the implementation of that binary.
func baseOptions(binary Version) []versionedOption {
	cidr := library.CIDR()
	if binary < Version1_32 {
		cidr = library.CIDRBefore132()
	}
	// ext.Lists' lists.range is cel-go's; 1.34 to 1.36 use cel-go v0.26.0,
	// whose range has no size limit.
	extLists := []cel.EnvOption{ext.Lists(ext.ListsVersion(3))}
	if binary < Version1_37 {
		extLists = append(extLists, library.UnlimitedRange())
	}
	selectors := authzSelectorsLibrary()
	if binary == Version1_31 {
		selectors = cel.Lib(authzSelectorsLib{inert: true})
	}
	return []versionedOption{
		{env: []cel.EnvOption{
			cel.HomogeneousAggregateLiterals(),
			cel.EagerlyValidateDeclarations(true),
			cel.DefaultUTCTimeZone(true),
			library.URLs(),
			library.Regex(),
			cel.CostEstimatorOptions(checker.PresenceTestHasCost(false)),
		}, program: []cel.ProgramOption{
			cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost),
			cel.CostLimit(perCallLimit),
			cel.CostTrackerOptions(interpreter.PresenceTestHasCost(false)),
		}},
		{removed: Version1_37, env: []cel.EnvOption{library.Lists(0)}},
		{env: []cel.EnvOption{authzLibrary()}},
		{env: []cel.EnvOption{cel.CrossTypeNumericComparisons(true), cel.OptionalTypes(), library.Quantity()}},
		{env: []cel.EnvOption{cel.ASTValidators(
			cel.ValidateDurationLiterals(),
			cel.ValidateTimestampLiterals(),
			cel.ValidateRegexLiterals(),
			cel.ValidateHomogeneousAggregateLiterals(),
		)}},
		{env: []cel.EnvOption{ext.Strings(ext.StringsVersion(2))}},
		{env: []cel.EnvOption{ext.Sets()}},
		{introduced: Version1_30, env: []cel.EnvOption{library.IP(), cidr}},
		{introduced: Version1_31, env: []cel.EnvOption{library.Format()}},
		{introduced: Version1_31, env: []cel.EnvOption{selectors}},
		{introduced: Version1_32, env: []cel.EnvOption{ext.TwoVarComprehensions()}},
		{introduced: Version1_33, env: []cel.EnvOption{library.Semver(1)}},
		{introduced: Version1_34, env: extLists},
		{introduced: Version1_37, env: []cel.EnvOption{library.Lists(1)}},
		{program: []cel.ProgramOption{cel.CostTracking(&library.CostEstimator{})}},
	}
}

// available reports whether o is part of an environment evaluated at compat.
func (o versionedOption) available(compat Version) bool {
	return o.introduced <= compat && (o.removed == 0 || compat < o.removed)
}

// Options configure [New]. The zero value selects Kubernetes 1.37.
type Options struct {
	// Version is the Kubernetes minor version whose API server vapkit
	// imitates; 0 means [MaxVersion].
	Version Version
	// Extra options are appended to every environment, after Kubernetes'
	// own. Use them for custom libraries; they make vapkit differ from the
	// API server.
	Extra []cel.EnvOption
}

// declKey selects one of the environments that differ in which optional
// variables they declare.
type declKey struct {
	params, authorizer bool
	mode               Mode
}

// Env is the Kubernetes CEL environment of one API server version. It is
// immutable and safe for concurrent use.
type Env struct {
	version Version
	envs    map[declKey]*cel.Env
	program []cel.ProgramOption
	// libs are the libraries of each mode, without variables.
	libs [2]libraryEnvs
	// custom is set when Options.Extra added functions whose costs no
	// estimate knows, so every evaluation is tracked.
	custom bool
	// paths numbers the size paths of the programs compiled.
	paths *celvalue.PathTable
}

// libraryEnvs are the libraries of one mode: withExtra has Options.Extra,
// plain (built on first use, when there are extras) has not.
type libraryEnvs struct {
	withExtra *cel.Env
	once      sync.Once
	plain     *cel.Env
	err       error
}

// New builds the environments of the chosen Kubernetes version.
func New(opts Options) (*Env, error) {
	v := opts.Version
	if v == 0 {
		v = MaxVersion
	}
	if v < MinVersion || v > MaxVersion {
		return nil, fmt.Errorf("unsupported Kubernetes version %s: supported versions are %s to %s", v, MinVersion, MaxVersion)
	}
	e := &Env{version: v, envs: make(map[declKey]*cel.Env, 8), custom: len(opts.Extra) > 0, paths: &celvalue.PathTable{}}
	for _, o := range baseOptions(v) {
		if o.available(v) {
			e.program = append(e.program, o.program...)
		}
	}
	for _, mode := range []Mode{StoredExpressions, NewExpressions} {
		// A server of version v stores what it knows (every option of v that
		// is not removed by v); it accepts new expressions as of v-1.
		base, err := newLibraryEnv(v, mode, opts.Extra)
		if err != nil {
			return nil, fmt.Errorf("building CEL environment: %w", err)
		}
		e.libs[mode].withExtra = base
		if err := e.declare(base, mode); err != nil {
			return nil, fmt.Errorf("building CEL environment: %w", err)
		}
	}
	return e, nil
}

// declare builds the environments of mode from its libraries, one for
// each combination of the optional variables.
func (e *Env) declare(base *cel.Env, mode Mode) error {
	objs := append(requestTypes(), namespaceTypes()...)
	objs = append(objs, newObjectType(variablesTypeName, map[string]*types.Type{}))
	provider := newTypeProvider(base.CELTypeProvider(), objs...)
	for _, params := range []bool{false, true} {
		for _, authz := range []bool{false, true} {
			vars := []cel.EnvOption{
				cel.CustomTypeProvider(provider),
				cel.CustomTypeAdapter(provider),
				cel.Variable(objectVar, cel.DynType),
				cel.Variable(oldObjectVar, cel.DynType),
				cel.Variable(namespaceVar, cel.ObjectType(namespaceTypeName)),
				cel.Variable(requestVar, cel.ObjectType(requestTypeName)),
				cel.Variable(variablesVar, cel.ObjectType(variablesTypeName)),
			}
			if params {
				vars = append(vars, cel.Variable(paramsVar, cel.DynType))
			}
			if authz {
				vars = append(vars,
					cel.Variable(authorizerVar, authorizerType),
					cel.Variable(requestResourceVar, resourceCheckType))
			}
			env, err := base.Extend(vars...)
			if err != nil {
				return err
			}
			e.envs[declKey{params: params, authorizer: authz, mode: mode}] = env
		}
	}
	return nil
}

// Version returns the Kubernetes version e imitates.
func (e *Env) Version() Version { return e.version }

// library returns the libraries of mode, without variables: those of
// Options.Extra too when extra is set. The environments without Extra are
// built on first use, for check-only scopes.
func (e *Env) library(mode Mode, extra bool) (*cel.Env, error) {
	l := &e.libs[mode]
	if extra || !e.custom {
		return l.withExtra, nil
	}
	l.once.Do(func() { l.plain, l.err = newLibraryEnv(e.version, mode, nil) })
	return l.plain, l.err
}

// newLibraryEnv builds the libraries of mode at version v, and extra.
func newLibraryEnv(v Version, mode Mode, extra []cel.EnvOption) (*cel.Env, error) {
	compat := v
	if mode == NewExpressions {
		compat = v - 1
	}
	var opts []cel.EnvOption
	for _, o := range baseOptions(v) {
		if o.available(compat) {
			opts = append(opts, o.env...)
		}
	}
	return cel.NewEnv(append(opts, extra...)...)
}

// celEnv returns the cel-go environment of mode declaring params and the
// authorizer when asked (`variables` has no fields), for the conformance
// harness through internal/celbridge.
func (e *Env) celEnv(mode Mode, params, authorizer bool) *cel.Env {
	return e.envs[declKey{params: params, authorizer: authorizer, mode: mode}]
}

// programOptions returns the program options the API server uses for
// admission expressions: optimisation, cost tracking with the Kubernetes
// call costs, the per-call cost limit and the interrupt check frequency.
func (e *Env) programOptions() []cel.ProgramOption {
	return append(append([]cel.ProgramOption(nil), e.program...), cel.InterruptCheckFrequency(checkFrequency))
}
