package policy

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/apivalidation"
	"github.com/vapkit/vapkit/internal/mutation"
	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/policy/manifest"
)

// Evaluator answers admission requests for a fixed set of policies and
// bindings. It is immutable and safe for concurrent use; to change policies,
// compile a new Evaluator and swap it in.
type Evaluator struct {
	env       *celenv.Env
	opts      Options
	mapper    ResourceMapper
	converter Converter
	policies  []*compiledPolicy
	index     *matching.Index
	// matchers holds every policy's and binding's compiled selectors;
	// labels rules out policies by the request's labels; scratches
	// recycles the per-request matching state, sized for matchers.
	matchers   *matching.MatcherSet
	labels     *matching.LabelIndex
	scratches  sync.Pool
	allIDs     []int // 0..len(policies)-1, with Options.TraceUnmatched
	issues     field.ErrorList
	unattached []string // policies without bindings, by name
	// skipped are trace entries for what is never evaluated: policies
	// without bindings, policies the API server drops, bindings naming a
	// missing policy; sorted by policy, then binding.
	skipped []PolicyTrace

	// candidates memoizes the index's answer per operation, resource and
	// subresource (a candidateKey) when the mapper is vapkit's own
	// (manifest.ResourceMapper), whose answers never change; candidateCount
	// bounds it, since requests may name any resource. lastCandidates is
	// the entry the latest lookup found, checked first: successive
	// requests mostly name the same resource, and comparing the key costs
	// less than hashing it.
	candidates     sync.Map // candidateKey -> *candidateMemo
	candidateCount atomic.Int32
	lastCandidates atomic.Pointer[candidateMemo]

	// mutating are the MutatingAdmissionPolicies with bindings, by name;
	// converters type their objects for apply configurations (nil when
	// the CRD schemas did not convert: every mutation is then a 503).
	// mutatingMatchers holds their compiled selectors, and
	// mutatingScratches the per-pass matching state sized for it.
	mutating          []*compiledMutating
	converters        *mutation.TypeConverter
	mutatingMatchers  *matching.MatcherSet
	mutatingScratches sync.Pool
}

type compiledPolicy struct {
	policy        *admissionregistrationv1.ValidatingAdmissionPolicy
	failurePolicy admissionregistrationv1.FailurePolicyType
	bindings      []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	// matcher and bindingMatchers are the compiled match criteria of the
	// policy and of bindings[i].
	matcher         *matching.Matcher
	bindingMatchers []*matching.Matcher
	configErr       error
	paramKind       *admissionregistrationv1.ParamKind
	// paramTypeMeta is the apiVersion and kind injected into typed params;
	// shared read-only by every evaluation.
	paramTypeMeta map[string]string
	paramsScoped  bool // param kind is namespaced

	scope           *celenv.Scope
	matchConditions []*celenv.Program
	mcPaths         []*field.Path
	validations     []compiledValidation
	audits          []compiledAudit
	auditExprs      []*celenv.Program // the audits' expressions, in order
	// traced is how many expressions an evaluation past the match
	// conditions traces, variables included.
	traced int
	// varPaths locates each variable by name, for traces.
	varPaths map[string]*field.Path
	// readsAuthorizer: a match condition or validation uses the
	// authorizer, whose values are otherwise not built.
	readsAuthorizer bool
}

type compiledValidation struct {
	path    *field.Path // of the expression, for traces
	msgPath *field.Path // of the message expression
	spec    admissionregistrationv1.Validation
	expr    *celenv.Program
	message *celenv.Program // nil without messageExpression
}

type compiledAudit struct {
	path *field.Path
	key  string
	expr *celenv.Program
}

// Compile builds an Evaluator from policies and bindings.
//
// Compile decides as if the API server had stored the policies and
// bindings: it applies the server's defaults for admissionregistration v1
// (failurePolicy Fail and, inside matchConstraints and matchResources,
// matchPolicy Equivalent, the empty namespaceSelector and objectSelector,
// which match everything, and rule scope "*") to copies, so a policy built
// as Go structs decides exactly as the same policy read by
// [github.com/vapkit/vapkit/policy/manifest.Load]. Policies written as
// v1beta1 or v1alpha1 are converted, and defaulted, by that Load.
// Compile never modifies its arguments.
//
// It fails only on unusable input: nil entries, two policies or bindings
// with the same name, malformed Options.CRDs, or both Options.Resources
// and Options.CRDs set. Problems the API server tolerates, or would have
// rejected when the object was created, are kept and behave at evaluation
// as they would there: an expression that does not compile fails when
// evaluated (subject to failurePolicy), a binding naming a missing policy is
// ignored and a policy without bindings is never evaluated.
// [Evaluator.Issues] lists them for callers who want to fail fast.
//
// Namespaces: every request for a namespaced resource that a binding
// matches looks its Namespace up through Options.Namespaces, for
// namespaceSelector and namespaceObject, as the API server does. A
// Namespace the getter does not return denies the request with the
// server's exact answer (404 `namespaces "prod" not found`), whatever the
// failurePolicy; with a nil Options.Namespaces every namespaced request
// is denied so. Supply the namespaces your requests are in
// ([matching.NewNamespaceMap] for a fixed set, an informer-backed getter
// in a cluster); [Evaluator.Issues] notes a nil getter.
func Compile(policies []*admissionregistrationv1.ValidatingAdmissionPolicy, bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding, opts Options) (*Evaluator, error) {
	e := &Evaluator{opts: opts, env: opts.Env, mapper: opts.Resources, converter: opts.Converter}
	if e.env == nil {
		env, err := celenv.New(celenv.Options{})
		if err != nil {
			return nil, err
		}
		e.env = env
	}
	if e.mapper != nil && len(opts.CRDs) > 0 {
		return nil, errors.New("options: set Resources or CRDs, not both: a ResourceMapper of your own must answer for the CRDs' kinds itself")
	}
	if e.mapper == nil {
		m, err := manifest.NewResourceMapper(opts.CRDs...)
		if err != nil {
			return nil, err
		}
		e.mapper = m
	}
	if e.converter == nil {
		e.converter = apiVersionConverter{}
	}

	byName, dropped, errs := e.compilePolicies(policies)
	errs = append(errs, e.attachBindings(bindings, byName, dropped)...)
	errs = append(errs, e.compileMutating()...)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	e.arrange(byName)
	return e, nil
}

// compilePolicies compiles each policy into byName, and records as skipped
// those the API server drops (named in dropped). errs are the entries
// Compile refuses: nil policies and duplicate names.
func (e *Evaluator) compilePolicies(policies []*admissionregistrationv1.ValidatingAdmissionPolicy) (byName map[string]*compiledPolicy, dropped map[string]bool, errs field.ErrorList) {
	byName = map[string]*compiledPolicy{}
	dropped = map[string]bool{}
	for i, p := range policies {
		path := field.NewPath("policies").Index(i)
		if p == nil {
			errs = append(errs, field.Required(path, "policy must not be nil"))
			continue
		}
		if _, dup := byName[p.Name]; dup {
			errs = append(errs, field.Duplicate(path.Child("metadata", "name"), p.Name))
			continue
		}
		dp := defaultedPolicy(p)
		cp, iss := e.compilePolicy(dp)
		e.issues = append(e.issues, iss...)
		e.issues = append(e.issues, apiIssues(field.NewPath("validatingAdmissionPolicy").Key(p.Name),
			apivalidation.ValidatePolicy(structuralOnly{}, dp, nil), iss)...)
		if cp != nil {
			byName[p.Name] = cp
		} else {
			dropped[p.Name] = true
			e.skipped = append(e.skipped, PolicyTrace{Policy: p.Name, Outcome: Skipped, Err: errDropped})
		}
	}
	return byName, dropped, errs
}

// attachBindings gives each binding to its policy in byName; a binding
// whose policy is missing or dropped is recorded as skipped and as an
// issue. The errors are the entries Compile refuses: nil bindings and
// duplicate names.
func (e *Evaluator) attachBindings(bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding, byName map[string]*compiledPolicy, dropped map[string]bool) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, b := range bindings {
		path := field.NewPath("bindings").Index(i)
		if b == nil {
			errs = append(errs, field.Required(path, "binding must not be nil"))
			continue
		}
		if seen[b.Name] {
			errs = append(errs, field.Duplicate(path.Child("metadata", "name"), b.Name))
			continue
		}
		seen[b.Name] = true
		b = defaultedBinding(b)
		e.issues = append(e.issues, apiIssues(field.NewPath("validatingAdmissionPolicyBinding").Key(b.Name), apivalidation.ValidateBinding(b), nil)...)
		cp, ok := byName[b.Spec.PolicyName]
		if !ok {
			why := errPolicyNotFound
			if dropped[b.Spec.PolicyName] {
				why = errDropped
			}
			e.skipped = append(e.skipped, PolicyTrace{Policy: b.Spec.PolicyName, Binding: b.Name, Outcome: Skipped,
				Actions: slices.Clone(b.Spec.ValidationActions), Err: why})
			e.issues = append(e.issues, field.NotFound(field.NewPath("validatingAdmissionPolicyBinding").Key(b.Name).Child("spec", "policyName"), b.Spec.PolicyName))
			continue
		}
		cp.bindings = append(cp.bindings, b)
	}
	return errs
}

// arrange puts the policies with bindings in name order, each with its
// bindings in name order, and indexes them; policies without bindings are
// recorded as unattached and skipped.
func (e *Evaluator) arrange(byName map[string]*compiledPolicy) {
	for _, cp := range byName {
		if len(cp.bindings) == 0 {
			e.unattached = append(e.unattached, cp.policy.Name)
			e.skipped = append(e.skipped, PolicyTrace{Policy: cp.policy.Name, Outcome: Skipped, Err: errNoBindings})
			continue
		}
		slices.SortFunc(cp.bindings, func(a, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) int {
			return cmp.Compare(a.Name, b.Name)
		})
		e.policies = append(e.policies, cp)
	}
	if e.opts.Namespaces == nil && slices.ContainsFunc(e.policies, matchesNamespaced) {
		e.issues = append(e.issues, field.Required(field.NewPath("options", "namespaces"), noNamespacesHint))
	}
	slices.Sort(e.unattached)
	slices.SortFunc(e.skipped, func(a, b PolicyTrace) int {
		return cmp.Or(cmp.Compare(a.Policy, b.Policy), cmp.Compare(a.Binding, b.Binding))
	})
	slices.SortFunc(e.policies, func(a, b *compiledPolicy) int { return cmp.Compare(a.policy.Name, b.policy.Name) })
	entries := make([]matching.IndexEntry, len(e.policies))
	for i, cp := range e.policies {
		entries[i] = matching.IndexEntry{ID: i, MatchResources: cp.policy.Spec.MatchConstraints}
	}
	e.index = matching.NewIndex(entries)
	e.compileMatchers()
	if e.opts.TraceUnmatched {
		e.allIDs = make([]int, len(e.policies))
		for i := range e.allIDs {
			e.allIDs[i] = i
		}
	}
}

// Issues reports what a careful author wants to know before relying on
// the decisions, with field paths under
// validatingAdmissionPolicy[<name>] or
// validatingAdmissionPolicyBinding[<name>]:
//
//   - what the API server's create validation would reject (missing
//     required fields, unsupported values, invalid names and selectors,
//     Deny together with Warn, and so on), checked on the defaulted copies
//     with the server's paths and messages;
//   - expressions that do not compile, in the environment the server
//     evaluates stored policies with (typecheck.ValidatePolicy also checks
//     newly written expressions against the stricter library set the
//     server accepts on create);
//   - bindings naming missing policies and policies dropped for an
//     unparsable paramKind;
//   - a nil Options.Namespaces, under options.namespaces, when a binding
//     can match namespaced requests.
//
// Policies come first, in input order, then bindings; the list is never
// modified.
func (e *Evaluator) Issues() field.ErrorList { return e.issues }

// compilePolicy compiles one policy in the order the API server does:
// variables, match conditions, validations, audit annotations, then message
// expressions. It returns nil for a policy the server silently drops.
func (e *Evaluator) compilePolicy(p *admissionregistrationv1.ValidatingAdmissionPolicy) (*compiledPolicy, field.ErrorList) {
	return e.compilePolicyAt(field.NewPath("validatingAdmissionPolicy").Key(p.Name), p)
}

// compilePolicyAt is compilePolicy with issues reported under root.
func (e *Evaluator) compilePolicyAt(root *field.Path, p *admissionregistrationv1.ValidatingAdmissionPolicy) (*compiledPolicy, field.ErrorList) {
	spec := root.Child("spec")
	var issues field.ErrorList
	cp := &compiledPolicy{policy: p, failurePolicy: admissionregistrationv1.Fail, paramKind: p.Spec.ParamKind}
	if pk := p.Spec.ParamKind; pk != nil {
		cp.paramTypeMeta = map[string]string{"apiVersion": pk.APIVersion, "kind": pk.Kind}
	}
	if p.Spec.FailurePolicy != nil {
		cp.failurePolicy = *p.Spec.FailurePolicy
	}
	if p.Spec.ParamKind != nil {
		var dropped bool
		if issues, dropped = e.resolveParamKind(cp, spec); dropped {
			return nil, issues
		}
	}

	cp.scope = e.env.NewScope(celenv.ScopeOptions{Params: p.Spec.ParamKind != nil})
	report := func(path *field.Path, prog *celenv.Program) {
		if err := prog.Err(); err != nil {
			issues = append(issues, field.Invalid(path, prog.Expression(), err.Detail))
		}
	}
	cp.compileVariables(p.Spec.Variables, spec, report)
	full := celenv.Decls{Authorizer: true}
	for i, mc := range p.Spec.MatchConditions {
		path := field.NewPath("spec", "matchConditions").Index(i).Child("expression")
		prog := cp.scope.Compile(mc.Expression, full, cel.BoolType)
		report(spec.Child("matchConditions").Index(i).Child("expression"), prog)
		cp.matchConditions = append(cp.matchConditions, prog)
		cp.mcPaths = append(cp.mcPaths, path)
	}
	for i, v := range p.Spec.Validations {
		prog := cp.scope.Compile(v.Expression, full, cel.BoolType)
		report(spec.Child("validations").Index(i).Child("expression"), prog)
		cp.validations = append(cp.validations, compiledValidation{
			path: field.NewPath("spec", "validations").Index(i).Child("expression"), spec: v, expr: prog,
		})
	}
	for i, a := range p.Spec.AuditAnnotations {
		prog := cp.scope.Compile(a.ValueExpression, full, cel.StringType, cel.NullType)
		report(spec.Child("auditAnnotations").Index(i).Child("valueExpression"), prog)
		cp.auditExprs = append(cp.auditExprs, prog)
		cp.audits = append(cp.audits, compiledAudit{
			path: field.NewPath("spec", "auditAnnotations").Index(i).Child("valueExpression"), key: a.Key, expr: prog,
		})
	}
	for i, v := range p.Spec.Validations {
		if v.MessageExpression == "" {
			continue
		}
		prog := cp.scope.Compile(v.MessageExpression, celenv.Decls{}, cel.StringType)
		report(spec.Child("validations").Index(i).Child("messageExpression"), prog)
		cp.validations[i].message = prog
		cp.validations[i].msgPath = field.NewPath("spec", "validations").Index(i).Child("messageExpression")
		cp.traced++
	}
	cp.traced += len(cp.validations) + len(cp.audits)
	for _, mc := range cp.matchConditions {
		cp.readsAuthorizer = cp.readsAuthorizer || mc.ReadsAuthorizer()
	}
	for _, v := range cp.validations {
		cp.readsAuthorizer = cp.readsAuthorizer || v.expr.ReadsAuthorizer()
	}
	return cp, issues
}

// resolveParamKind finds the resource of the policy's paramKind. dropped
// reports a paramKind whose apiVersion does not parse: the API server drops
// such a policy without a word.
func (e *Evaluator) resolveParamKind(cp *compiledPolicy, spec *field.Path) (issues field.ErrorList, dropped bool) {
	pk := cp.paramKind
	gv, err := schema.ParseGroupVersion(pk.APIVersion)
	if err != nil {
		return field.ErrorList{field.Invalid(spec.Child("paramKind", "apiVersion"), pk.APIVersion, "policy is not enforced: "+err.Error())}, true
	}
	gvk := gv.WithKind(pk.Kind)
	_, namespaced, err := e.mapper.ResourceFor(gvk)
	if err != nil {
		cp.configErr = fmt.Errorf("failed to find resource referenced by paramKind: '%v'", gvk)
		issues = append(issues, field.Invalid(spec.Child("paramKind"), gvk.String(), cp.configErr.Error()))
	}
	cp.paramsScoped = namespaced
	return issues, false
}

// compileVariables adds the policy's variables to its scope and remembers
// the path of each name for the trace.
func (cp *compiledPolicy) compileVariables(vars []admissionregistrationv1.Variable, spec *field.Path, report func(*field.Path, *celenv.Program)) {
	for i, v := range vars {
		prog := cp.scope.AddVariable(v.Name, v.Expression)
		report(spec.Child("variables").Index(i).Child("expression"), prog)
		if cp.varPaths == nil {
			cp.varPaths = map[string]*field.Path{}
		}
		if _, seen := cp.varPaths[v.Name]; !seen {
			cp.traced++
		}
		// A later variable of the same name replaces an earlier one.
		cp.varPaths[v.Name] = field.NewPath("spec", "variables").Index(i).Child("expression")
	}
}

// noNamespacesHint says how to provide the namespaces that namespaced
// requests are looked up in.
const noNamespacesHint = "Options.Namespaces is nil, so every namespaced request a binding matches is denied " +
	"as the API server denies one whose Namespace does not exist (404 namespaces \"<name>\" not found); " +
	"set it to a matching.NamespaceGetter: matching.NewNamespaceMap for a fixed set, an informer-backed getter in a cluster"

// matchesNamespaced reports whether a policy's rules may match namespaced
// resources (any scope but Cluster).
func matchesNamespaced(cp *compiledPolicy) bool {
	mc := cp.policy.Spec.MatchConstraints
	if mc == nil {
		return false
	}
	for _, r := range mc.ResourceRules {
		if r.Scope == nil || *r.Scope != admissionregistrationv1.ClusterScope {
			return true
		}
	}
	return false
}

// compileMatchers compiles the selectors of every policy and binding once,
// sharing equal ones, and builds the label index over them.
func (e *Evaluator) compileMatchers() {
	e.matchers = matching.NewMatcherSet()
	entries := make([]matching.LabelIndexEntry, len(e.policies))
	for i, cp := range e.policies {
		cp.matcher = e.matchers.Policy(cp.policy)
		cp.bindingMatchers = make([]*matching.Matcher, len(cp.bindings))
		for j, b := range cp.bindings {
			cp.bindingMatchers[j] = e.matchers.Binding(b)
		}
		entries[i] = matching.LabelIndexEntry{ID: i, Policy: cp.matcher, Bindings: cp.bindingMatchers, FailsWhenMatched: cp.configErr != nil}
	}
	e.labels = e.matchers.NewLabelIndex(entries)
	set := e.matchers
	e.scratches.New = func() any { return set.NewScratch() }
}
