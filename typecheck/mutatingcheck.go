// vapkit's own type checking of MutatingAdmissionPolicy expressions: the
// API server has none to reproduce.

package typecheck

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/parser"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/patchtypes"
)

// CheckMutating type-checks the expressions of a MutatingAdmissionPolicy
// against the schema of every kind it matches. This is vapkit's own check,
// not the API server's: a 1.37 server type-checks no MAP expression against
// schemas (MutatingAdmissionPolicy has no status in k8s.io/api v0.37.2, and
// k8s.io/apiserver's type checker, pkg/admission/plugin/policy/validating/
// typechecking.go, reads validating policies only), so the result is never
// a status the server would write. It reports, for a matched kind, what
// would fail or do nothing on its objects:
//
//   - spec.variables[i].expression, spec.matchConditions[i].expression and
//     spec.mutations[i].applyConfiguration.expression or .jsonPatch.expression
//     compiled as [Checker.Check] compiles validations: object and
//     oldObject of the kind's type, params of the paramKind's, variables in
//     order, and for mutations Object, JSONPatch and jsonpatch.escapeKey
//     declared and the result type required (Object, or a list of
//     JSONPatch); an undefined field such as object.spec.replica is an
//     issue;
//   - in apply configurations, the Object{...} values: Object is
//     dynamically typed in CEL, as upstream declares it, so the CEL checker
//     accepts any field; vapkit checks each construction as far as the
//     schema types it: the type name (Object.spec.template) must name a
//     path of the schema (a list's items are named by the list's path),
//     each field set must be one of its properties (unless the schema
//     allows unknown fields or has additionalProperties), and a literal
//     value (string, integer, double, boolean) must have the property's
//     type. Values computed by expressions are checked by the CEL checker
//     where they are typed, and otherwise only when the mutation is applied.
//
// The kinds come from spec.matchConstraints as for [Checker.Check]; with
// Options.CRDs custom kinds are checked too. The warnings have the format
// of [Result].Warnings: one per expression with issues, in field order
// (variables, match conditions, mutations), the text per kind
// "<group/version, Kind=Kind>: <issues>\n" joined with "\n". A nil p gives
// nil.
func (c *Checker) CheckMutating(p *admissionregistrationv1.MutatingAdmissionPolicy) []admissionregistrationv1.ExpressionWarning {
	if p == nil {
		return nil
	}
	cc := c
	if c.extended != nil {
		cc = c.extended
	}
	// The matching and params of a MAP are a validating policy's.
	vp := &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
		ParamKind: p.Spec.ParamKind, MatchConstraints: p.Spec.MatchConstraints,
	}}
	type kindSchema struct {
		kindType
		schema *spec.Schema
	}
	var kinds []kindSchema
	for _, gvk := range typesToCheck(vp, cc.kinds) {
		s, err := cc.resolver.ResolveSchema(gvk)
		if err != nil || s == nil {
			continue
		}
		kinds = append(kinds, kindSchema{kindType{gvk: gvk, types: declare(s, gvk.Kind)}, s})
	}
	paramGVK, hasParams := paramsGVK(vp)
	var paramSchema *spec.Schema
	if hasParams {
		if ps, err := cc.resolver.ResolveSchema(paramGVK); err == nil {
			paramSchema = ps
		}
	}

	out, mutations := mutatingExprs(p)
	nVars := len(p.Spec.Variables)
	for _, k := range kinds {
		scope := cc.scope(k.kindType, paramGVK, hasParams, paramSchema)
		issues := make([]string, len(out))
		for i, v := range p.Spec.Variables {
			issues[i] = celIssues(scope.AddVariable(v.Name, v.Expression))
		}
		for i, mc := range p.Spec.MatchConditions {
			issues[nVars+i] = celIssues(scope.Compile(mc.Expression, celenv.Decls{Authorizer: true}))
		}
		for _, m := range mutations {
			issues[m.at] = celIssues(scope.Compile(m.expr, celenv.Decls{Authorizer: true, PatchTypes: true}, m.want))
			if m.apply && issues[m.at] == "" {
				issues[m.at] = objectIssues(m.expr, k.schema)
			}
		}
		for j, text := range issues {
			if text != "" {
				out[j].results = append(out[j].results, gvkResult{gvk: k.gvk, text: fmt.Sprintf("%v: %s\n", k.gvk, text)})
			}
		}
	}
	return format(out)
}

// mutationExpr is one mutation expression to check.
type mutationExpr struct {
	at    int // index of its result
	expr  string
	want  *types.Type
	apply bool
}

// mutatingExprs lists the expressions CheckMutating reports on, in field
// order (variables, match conditions, mutations), and the mutations among
// them.
func mutatingExprs(p *admissionregistrationv1.MutatingAdmissionPolicy) ([]exprResult, []mutationExpr) {
	spath := field.NewPath("spec")
	var out []exprResult
	for i := range p.Spec.Variables {
		out = append(out, exprResult{fieldRef: spath.Child("variables").Index(i).Child("expression").String()})
	}
	for i := range p.Spec.MatchConditions {
		out = append(out, exprResult{fieldRef: spath.Child("matchConditions").Index(i).Child("expression").String()})
	}
	var mutations []mutationExpr
	for i, m := range p.Spec.Mutations {
		mp := spath.Child("mutations").Index(i)
		switch {
		case m.PatchType == admissionregistrationv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			mutations = append(mutations, mutationExpr{len(out), m.ApplyConfiguration.Expression, patchtypes.ObjectType, true})
			out = append(out, exprResult{fieldRef: mp.Child("applyConfiguration", "expression").String()})
		case m.PatchType == admissionregistrationv1.PatchTypeJSONPatch && m.JSONPatch != nil:
			mutations = append(mutations, mutationExpr{len(out), m.JSONPatch.Expression, patchtypes.JSONPatchListType, false})
			out = append(out, exprResult{fieldRef: mp.Child("jsonPatch", "expression").String()})
		}
	}
	return out, mutations
}

// celIssues returns the CEL issues of a compiled program, "" when it
// compiled.
func celIssues(p *celenv.Program) string {
	if err := p.Err(); err != nil {
		if err.Issues != nil {
			return err.Issues.String()
		}
		return err.Detail
	}
	return ""
}

// objectIssues checks the Object{...} constructions of an apply
// configuration against the kind's schema s (see [Checker.CheckMutating]);
// the issues are in CEL's format, in source order.
func objectIssues(expression string, s *spec.Schema) string {
	p, err := parser.NewParser(parser.Macros(parser.AllMacros...))
	if err != nil {
		return ""
	}
	src := common.NewTextSource(expression)
	tree, errs := p.Parse(src)
	if len(errs.GetErrors()) > 0 {
		return ""
	}
	found := common.NewErrors(src)
	var visit func(e ast.Expr)
	visit = func(e ast.Expr) {
		if e.Kind() == ast.StructKind {
			checkConstruction(e, s, tree.SourceInfo(), found)
		}
		for _, child := range children(e) {
			visit(child)
		}
	}
	visit(tree.Expr())
	if len(found.GetErrors()) == 0 {
		return ""
	}
	return found.ToDisplayString()
}

// children lists the direct subexpressions of e.
func children(e ast.Expr) []ast.Expr {
	switch e.Kind() {
	case ast.CallKind:
		c := e.AsCall()
		if c.IsMemberFunction() {
			return append([]ast.Expr{c.Target()}, c.Args()...)
		}
		return c.Args()
	case ast.SelectKind:
		return []ast.Expr{e.AsSelect().Operand()}
	case ast.ListKind:
		return e.AsList().Elements()
	case ast.MapKind:
		var out []ast.Expr
		for _, en := range e.AsMap().Entries() {
			me := en.AsMapEntry()
			out = append(out, me.Key(), me.Value())
		}
		return out
	case ast.StructKind:
		var out []ast.Expr
		for _, f := range e.AsStruct().Fields() {
			out = append(out, f.AsStructField().Value())
		}
		return out
	case ast.ComprehensionKind:
		c := e.AsComprehension()
		return []ast.Expr{c.IterRange(), c.AccuInit(), c.LoopCondition(), c.LoopStep(), c.Result()}
	}
	return nil
}

// checkConstruction checks one Object{...} construction.
func checkConstruction(e ast.Expr, root *spec.Schema, info *ast.SourceInfo, found *common.Errors) {
	st := e.AsStruct()
	name := st.TypeName()
	if name != patchtypes.ObjectTypeName && !strings.HasPrefix(name, patchtypes.ObjectTypeName+".") {
		return // JSONPatch, or a type the CEL checker already judged
	}
	s := root
	path := strings.Split(name, ".")[1:]
	for i, seg := range path {
		s = itemsOf(s)
		if s == nil || openSchema(s) {
			return
		}
		next, ok := s.Properties[seg]
		if !ok {
			found.ReportErrorAtID(e.ID(), info.GetStartLocation(e.ID()), "type %s names no field of the schema: %q is not a property of %s",
				name, seg, typeName(path[:i]))
			return
		}
		s = &next
	}
	s = itemsOf(s)
	if s == nil || openSchema(s) {
		return
	}
	for _, f := range st.Fields() {
		sf := f.AsStructField()
		prop, ok := s.Properties[sf.Name()]
		if !ok {
			found.ReportErrorAtID(f.ID(), info.GetStartLocation(f.ID()), "field %q is not a property of %s in the schema", sf.Name(), name)
			continue
		}
		v := sf.Value()
		if v.Kind() != ast.LiteralKind {
			continue
		}
		if want, ok := literalFits(v.AsLiteral(), &prop); !ok {
			found.ReportErrorAtID(v.ID(), info.GetStartLocation(v.ID()), "field %q of %s is %s in the schema, got %s",
				sf.Name(), name, want, v.AsLiteral().Type().TypeName())
		}
	}
}

// typeName renders the Object type name of a path.
func typeName(path []string) string {
	return strings.Join(append([]string{patchtypes.ObjectTypeName}, path...), ".")
}

// itemsOf returns the schema of a list's items for a list schema, s
// otherwise; nil when an array has no items schema.
func itemsOf(s *spec.Schema) *spec.Schema {
	if s.Type.Contains("array") {
		if s.Items == nil || s.Items.Schema == nil {
			return nil
		}
		return s.Items.Schema
	}
	return s
}

// openSchema reports whether s accepts fields it does not declare, or
// declares none to check against.
func openSchema(s *spec.Schema) bool {
	if v, ok := s.Extensions.GetBool("x-kubernetes-preserve-unknown-fields"); ok && v {
		return true
	}
	if s.AdditionalProperties != nil {
		return true
	}
	if v, _ := s.Extensions.GetBool("x-kubernetes-int-or-string"); v {
		return true
	}
	return len(s.Properties) == 0 || len(s.AllOf) > 0 || len(s.AnyOf) > 0 || len(s.OneOf) > 0
}

// literalFits reports whether literal l may be the value of a property of
// schema s; want names the schema's type when not. Null, and schemas
// without a type, accept anything.
func literalFits(l ref.Val, s *spec.Schema) (string, bool) {
	if intOrString, _ := s.Extensions.GetBool("x-kubernetes-int-or-string"); intOrString || s.Format == "int-or-string" {
		switch l.(type) {
		case types.Int, types.Uint, types.String, types.Null:
			return "", true
		}
		return "an integer or a string", false
	}
	if len(s.Type) != 1 {
		return "", true
	}
	var ok bool
	switch l.(type) {
	case types.Null:
		return "", true
	case types.String:
		ok = s.Type[0] == "string"
	case types.Int, types.Uint:
		ok = s.Type[0] == "integer" || s.Type[0] == "number"
	case types.Double:
		ok = s.Type[0] == "number"
	case types.Bool:
		ok = s.Type[0] == "boolean"
	case types.Bytes:
		ok = s.Type[0] == "string" && s.Format == "byte"
	}
	want := map[string]string{"string": "a string", "integer": "an integer", "number": "a number", "boolean": "a boolean", "object": "an object", "array": "a list"}[s.Type[0]]
	if want == "" {
		want = s.Type[0]
	}
	return want, ok
}
