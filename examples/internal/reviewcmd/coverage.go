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
	Policy      string               `json:"policy"`
	Expressions []expressionCoverage `json:"expressions"`
	Bindings    []bindingCoverage    `json:"bindings"`
}

// expressionCoverage counts the results of one expression over the tests.
// For validations, match conditions and variables True and False are the
// boolean results; for message expressions, audit annotations and
// variables of other types a value counts as True and, for audit
// annotations, null or "" (no annotation) as False. A variable counts once
// per evaluation that read it.
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

// measureCoverage builds the coverage of a suite from its tests' decisions.
func measureCoverage(file string, m *manifest.Set, outs []testOutcome) *coverage {
	c := &coverage{Suite: file}
	byPolicy := map[string]*policyCoverage{}
	exprIndex := map[string]map[string]int{}
	for _, p := range m.Policies {
		pc := &policyCoverage{Policy: p.Name}
		idx := map[string]int{}
		add := func(path string, traced bool) {
			idx[path] = len(pc.Expressions)
			pc.Expressions = append(pc.Expressions, expressionCoverage{Path: path, Traced: traced})
		}
		for i := range p.Spec.MatchConditions {
			add(fmt.Sprintf("spec.matchConditions[%d].expression", i), true)
		}
		for i := range p.Spec.Variables {
			add(fmt.Sprintf("spec.variables[%d].expression", i), true)
		}
		for i, v := range p.Spec.Validations {
			add(fmt.Sprintf("spec.validations[%d].expression", i), true)
			if v.MessageExpression != "" {
				add(fmt.Sprintf("spec.validations[%d].messageExpression", i), true)
			}
		}
		for i := range p.Spec.AuditAnnotations {
			add(fmt.Sprintf("spec.auditAnnotations[%d].valueExpression", i), true)
		}
		byPolicy[p.Name] = pc
		exprIndex[p.Name] = idx
		c.Policies = append(c.Policies, *pc)
	}
	bindIndex := map[[2]string]int{}
	for _, b := range m.Bindings {
		pc, ok := byPolicy[b.Spec.PolicyName]
		if !ok {
			continue
		}
		bindIndex[[2]string{b.Spec.PolicyName, b.Name}] = len(pc.Bindings)
		pc.Bindings = append(pc.Bindings, bindingCoverage{Binding: b.Name})
	}
	for _, o := range outs {
		if o.decision == nil {
			continue
		}
		matched := map[[2]string]bool{}
		for _, tr := range o.decision.Trace {
			pc, ok := byPolicy[tr.Policy]
			if !ok {
				continue
			}
			if tr.Outcome != policy.NotMatched {
				matched[[2]string{tr.Policy, tr.Binding}] = true
			}
			for _, et := range tr.Expressions {
				if et.Path == nil {
					continue
				}
				path := et.Path.String()
				i, ok := exprIndex[tr.Policy][path]
				if !ok {
					continue
				}
				e := &pc.Expressions[i]
				switch {
				case et.Outcome == policy.Errored:
					e.Error++
				case et.Outcome == policy.Failed:
					e.False++
				case et.Outcome == policy.Passed && strings.HasPrefix(path, "spec.auditAnnotations") && (et.Value == "" || et.Value == "null"):
					e.False++ // no annotation
				case et.Outcome == policy.Passed:
					e.True++
				}
			}
		}
		// One test counts once per binding, whatever its params.
		for k := range matched {
			if pc, ok := byPolicy[k[0]]; ok {
				if i, ok := bindIndex[k]; ok {
					pc.Bindings[i].Matched++
				}
			}
		}
	}
	for i := range c.Policies {
		c.Policies[i] = *byPolicy[c.Policies[i].Policy]
	}
	return c
}

// writeCoverage writes the coverage tables of a run in text.
func writeCoverage(w io.Writer, covs []*coverage) error {
	var b strings.Builder
	for _, c := range covs {
		fmt.Fprintf(&b, "coverage of %s:\n", c.Suite)
		tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "  POLICY\tEXPRESSION\tTRUE\tFALSE\tERROR\t")
		for _, p := range c.Policies {
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
