// Package typecheckcmd is the typecheck command of examples/typecheck and
// examples/vapkit (vapkit typecheck).
package typecheckcmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/policy/manifest"
	"github.com/vapkit/vapkit/typecheck"
)

// Main runs the command with args (without the program name), writing the
// report to stdout and problems to stderr, and returns the exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	code, err := run(args, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "typecheck:", err)
	}
	return code
}

// report is the YAML printed for one policy.
type report struct {
	Policy string `json:"policy"`
	// Kind is MutatingAdmissionPolicy for mutating policies, absent for
	// validating ones.
	Kind             string   `json:"kind,omitempty"`
	Source           string   `json:"source"`
	Rejected         bool     `json:"rejected"`
	ValidationErrors []string `json:"validationErrors,omitempty"`
	// Status is what the API server writes for a validating policy; a
	// MutatingAdmissionPolicy has no status.
	Status           *admissionregistrationv1.ValidatingAdmissionPolicyStatus `json:"status,omitempty"`
	WarningLocations []string                                                 `json:"warningLocations,omitempty"`
	Extended         []admissionregistrationv1.ExpressionWarning              `json:"vapkitExtendedWarnings,omitempty"`
	// Mutating are vapkit's own warnings for a MutatingAdmissionPolicy
	// (typecheck.Checker.CheckMutating): the API server type-checks none.
	Mutating []admissionregistrationv1.ExpressionWarning `json:"vapkitMutatingWarnings,omitempty"`
}

// policyDoc is one policy, validating or mutating, and where it was read.
type policyDoc struct {
	file     string
	policy   *admissionregistrationv1.ValidatingAdmissionPolicy
	mutating *admissionregistrationv1.MutatingAdmissionPolicy
	loc      *locator
	line     int
}

// run writes the report for files to w and returns the exit status.
func run(files []string, w io.Writer) (int, error) {
	if len(files) == 0 {
		return 2, errors.New("usage: typecheck FILE...")
	}
	var policies []policyDoc
	var crds []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return 2, err
		}
		docs, err := manifest.Decode(data, f)
		if err != nil {
			return 2, err
		}
		locs := newLocators(data)
		for _, d := range docs {
			switch o := d.Object.(type) {
			case *admissionregistrationv1.ValidatingAdmissionPolicy:
				policies = append(policies, policyDoc{file: f, policy: o, loc: locs.find(d.Line, d.Item), line: d.Line})
			case *admissionregistrationv1.MutatingAdmissionPolicy:
				policies = append(policies, policyDoc{file: f, mutating: o, loc: locs.find(d.Line, d.Item), line: d.Line})
			case *unstructured.Unstructured:
				if o.GetAPIVersion() == "apiextensions.k8s.io/v1" && o.GetKind() == "CustomResourceDefinition" {
					crds = append(crds, o)
				}
			}
		}
	}
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		return 2, err
	}
	checker, err := typecheck.NewChecker(typecheck.Options{Env: env, CRDs: crds})
	if err != nil {
		return 2, err
	}
	code := 0
	for i, pd := range policies {
		r, ws := check(env, checker, pd)
		if r.Rejected {
			code = 1
		}
		for _, ws := range ws {
			for _, wn := range ws {
				r.WarningLocations = append(r.WarningLocations, fmt.Sprintf("%s:%d: %s", pd.file, pd.loc.line(wn.FieldRef, pd.line), wn.FieldRef))
			}
		}
		out, err := yaml.Marshal(r)
		if err != nil {
			return 2, err
		}
		if i > 0 {
			fmt.Fprintln(w, "---")
		}
		if _, err := w.Write(out); err != nil {
			return 2, err
		}
	}
	return code, nil
}

// check validates and type-checks one policy; ws are the warnings to
// locate.
func check(env *celenv.Env, checker *typecheck.Checker, pd policyDoc) (report, [][]admissionregistrationv1.ExpressionWarning) {
	r := report{Source: pd.file + ":" + strconv.Itoa(pd.line)}
	var errs field.ErrorList
	var ws [][]admissionregistrationv1.ExpressionWarning
	if pd.mutating != nil {
		r.Policy, r.Kind = pd.mutating.Name, "MutatingAdmissionPolicy"
		errs = typecheck.ValidateMutatingPolicy(env, pd.mutating)
		r.Mutating = checker.CheckMutating(pd.mutating)
		ws = append(ws, r.Mutating)
	} else {
		r.Policy = pd.policy.Name
		errs = typecheck.ValidatePolicy(env, pd.policy)
		res := checker.Check(pd.policy)
		r.Status = &admissionregistrationv1.ValidatingAdmissionPolicyStatus{TypeChecking: &admissionregistrationv1.TypeChecking{ExpressionWarnings: res.Warnings}}
		r.Extended = res.Extended
		ws = append(ws, res.Warnings, res.Extended)
	}
	for _, e := range errs {
		r.ValidationErrors = append(r.ValidationErrors, fmt.Sprintf("%s:%d: %s", pd.file, pd.loc.line(e.Field, pd.line), e.Error()))
	}
	r.Rejected = len(r.ValidationErrors) > 0
	return r, ws
}

// splitPath turns a field path such as spec.validations[0].expression into
// its keys and indexes.
func splitPath(p string) []string {
	var out []string
	for _, part := range strings.Split(p, ".") {
		for part != "" {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				out = append(out, part)
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.IndexByte(part[i:], ']')
			if j < 0 {
				out = append(out, part[i:])
				break
			}
			out = append(out, part[i:i+j+1])
			part = part[i+j+1:]
		}
	}
	return out
}
