package reviewcmd

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

// coverage is what a suite's tests exercised of its policies.
type coverage struct {
	// Suite is the suite file.
	Suite    string           `json:"suite"`
	Policies []policyCoverage `json:"policies"`
}

// policyCoverage is the coverage of one policy.
type policyCoverage struct {
	Policy string `json:"policy"`
	// Kind is MutatingAdmissionPolicy for mutating policies; empty for
	// validating ones.
	Kind        string               `json:"kind,omitempty"`
	Expressions []expressionCoverage `json:"expressions"`
	Bindings    []bindingCoverage    `json:"bindings"`
}

// expressionCoverage counts the results of one expression over the tests.
// For validations, match conditions and variables True and False are the
// boolean results; for message expressions, audit annotations and
// variables of other types a value counts as True and, for audit
// annotations, null or "" (no annotation) as False. A variable counts once
// per evaluation that read it (each mutation of a mutating policy
// evaluates afresh the variables it reads). For the mutations of mutating
// policies, True counts the evaluations that changed the object and False
// those that left it as it was.
type expressionCoverage struct {
	// Path is the expression's field path, e.g. spec.validations[0].expression.
	Path string `json:"path"`
	// Traced is true: the decision trace reports every expression,
	// variables included (it was false for variables before they were
	// traced, and stays for readers of that format).
	Traced bool `json:"traced"`
	True   int  `json:"true"`
	False  int  `json:"false"`
	Error  int  `json:"error"`
}

// never reports whether no test evaluated the expression.
func (e expressionCoverage) never() bool { return e.Traced && e.True+e.False+e.Error == 0 }

// bindingCoverage tells how many tests a binding matched.
type bindingCoverage struct {
	Binding string `json:"binding"`
	Matched int    `json:"matched"`
}

// policyKey identifies a policy: validating and mutating policies may
// share a name.
type policyKey struct {
	mutating bool
	name     string
}

// bindingKey identifies a binding of a policy.
type bindingKey struct {
	policy  policyKey
	binding string
}

// measureCoverage builds the coverage of a suite from its tests' decisions.
func measureCoverage(file string, m *manifest.Set, outs []testOutcome) *coverage {
	c := &coverage{Suite: file}
	byPolicy := map[policyKey]*policyCoverage{}
	exprIndex := map[policyKey]map[string]int{}
	var order []policyKey
	declare := func(key policyKey, paths []string) {
		pc := &policyCoverage{Policy: key.name}
		if key.mutating {
			pc.Kind = "MutatingAdmissionPolicy"
		}
		idx := map[string]int{}
		for _, path := range paths {
			idx[path] = len(pc.Expressions)
			pc.Expressions = append(pc.Expressions, expressionCoverage{Path: path, Traced: true})
		}
		byPolicy[key], exprIndex[key] = pc, idx
		order = append(order, key)
	}
	// Mutating policies first: the API server runs them first.
	for _, p := range m.MutatingPolicies {
		var paths []string
		for i := range p.Spec.MatchConditions {
			paths = append(paths, fmt.Sprintf("spec.matchConditions[%d].expression", i))
		}
		for i := range p.Spec.Variables {
			paths = append(paths, fmt.Sprintf("spec.variables[%d].expression", i))
		}
		for i, mu := range p.Spec.Mutations {
			switch {
			case mu.ApplyConfiguration != nil:
				paths = append(paths, fmt.Sprintf("spec.mutations[%d].applyConfiguration.expression", i))
			case mu.JSONPatch != nil:
				paths = append(paths, fmt.Sprintf("spec.mutations[%d].jsonPatch.expression", i))
			}
		}
		declare(policyKey{mutating: true, name: p.Name}, paths)
	}
	for _, p := range m.Policies {
		var paths []string
		for i := range p.Spec.MatchConditions {
			paths = append(paths, fmt.Sprintf("spec.matchConditions[%d].expression", i))
		}
		for i := range p.Spec.Variables {
			paths = append(paths, fmt.Sprintf("spec.variables[%d].expression", i))
		}
		for i, v := range p.Spec.Validations {
			paths = append(paths, fmt.Sprintf("spec.validations[%d].expression", i))
			if v.MessageExpression != "" {
				paths = append(paths, fmt.Sprintf("spec.validations[%d].messageExpression", i))
			}
		}
		for i := range p.Spec.AuditAnnotations {
			paths = append(paths, fmt.Sprintf("spec.auditAnnotations[%d].valueExpression", i))
		}
		declare(policyKey{name: p.Name}, paths)
	}
	bindIndex := map[bindingKey]int{}
	addBinding := func(key policyKey, name string) {
		if pc, ok := byPolicy[key]; ok {
			bindIndex[bindingKey{key, name}] = len(pc.Bindings)
			pc.Bindings = append(pc.Bindings, bindingCoverage{Binding: name})
		}
	}
	for _, b := range m.Bindings {
		addBinding(policyKey{name: b.Spec.PolicyName}, b.Name)
	}
	for _, b := range m.MutatingBindings {
		addBinding(policyKey{mutating: true, name: b.Spec.PolicyName}, b.Name)
	}
	for _, o := range outs {
		if o.decision == nil {
			continue
		}
		// One test counts once per binding, whatever its params and
		// passes.
		matched := map[bindingKey]bool{}
		count := func(mutating bool, traces []policy.PolicyTrace) {
			for _, tr := range traces {
				key := policyKey{mutating: mutating, name: tr.Policy}
				pc, ok := byPolicy[key]
				if !ok {
					continue
				}
				if tr.Outcome != policy.NotMatched && tr.Binding != "" {
					matched[bindingKey{key, tr.Binding}] = true
				}
				for _, et := range tr.Expressions {
					if et.Path == nil {
						continue
					}
					path := et.Path.String()
					if i, ok := exprIndex[key][path]; ok {
						countExpression(&pc.Expressions[i], path, et)
					}
				}
			}
		}
		count(true, o.decision.Mutations)
		count(false, o.decision.Trace)
		for k := range matched {
			if i, ok := bindIndex[k]; ok {
				byPolicy[k.policy].Bindings[i].Matched++
			}
		}
	}
	for _, key := range order {
		c.Policies = append(c.Policies, *byPolicy[key])
	}
	return c
}

// countExpression counts one evaluation of the expression at path.
func countExpression(e *expressionCoverage, path string, et policy.ExprTrace) {
	switch {
	case et.Outcome == policy.Errored:
		e.Error++
	case et.Outcome == policy.Failed:
		e.False++
	case et.Outcome == policy.Passed && strings.HasPrefix(path, "spec.auditAnnotations") && (et.Value == "" || et.Value == "null"):
		e.False++ // no annotation
	case et.Outcome == policy.Passed && strings.HasPrefix(path, "spec.mutations") && et.Value != "changed":
		e.False++ // the object is unchanged
	case et.Outcome == policy.Passed:
		e.True++
	}
}

// writeCoverage writes the coverage tables of a run in text.
func writeCoverage(w io.Writer, covs []*coverage) error {
	var b strings.Builder
	for _, c := range covs {
		fmt.Fprintf(&b, "coverage of %s:\n", c.Suite)
		tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "  POLICY\tEXPRESSION\tTRUE\tFALSE\tERROR\t")
		for _, p := range c.Policies {
			if p.Kind != "" {
				p.Policy += " (mutating)"
			}
			for _, e := range p.Expressions {
				note := ""
				switch {
				case e.never():
					note = "never evaluated"
				}
				fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\t%s\n", p.Policy, e.Path, e.True, e.False, e.Error, note)
			}
			for _, bc := range p.Bindings {
				if bc.Matched == 0 {
					fmt.Fprintf(tw, "  %s\tbinding %s\t\t\t\tnever matched\n", p.Policy, bc.Binding)
				}
			}
			if len(p.Bindings) == 0 {
				fmt.Fprintf(tw, "  %s\t(no binding)\t\t\t\tnever evaluated\n", p.Policy)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	var out strings.Builder
	for line := range strings.Lines(b.String()) {
		out.WriteString(strings.TrimRight(line, " \n") + "\n")
	}
	_, err := io.WriteString(w, out.String())
	return err
}
