package celenv

import (
	"reflect"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"

	"github.com/vapkit/vapkit/internal/celvalue"
)

// Field reads on typed objects.
//
// cel-go reads `object.spec.template` one qualifier at a time, each
// through a chain of type switches and an adapter call before the map
// lookup itself. The untracked programs (Program.fast) replace the
// planner's nodes for plain chains of field names on a variable, such as
// `object.spec.containers` or `c.image` in a comprehension, and for
// presence tests on them, with nodes that look the fields up directly
// while the values are lazy typed maps (celvalue.SelectPath). Anything else
// (other values, absent fields, conversion errors) goes to the planner's
// node, so that every value and error stays cel-go's.

// plannerTypes are the dynamic types of the cel-go planner's nodes and
// attributes that typed paths replace, learnt from cel-go itself (see
// probePlanner) since they are unexported.
type plannerTypes struct {
	// attr is the node of an attribute read; testOnly the node of a
	// presence test.
	attr, testOnly reflect.Type
	// absolute is a variable's attribute; str a field name qualifier;
	// testOnlyQual the last qualifier of a presence test's attribute.
	absolute, str, testOnlyQual reflect.Type
}

// plannerNodes returns the planner's types, or nil when cel-go does not
// plan as probePlanner expects (typed paths are then never used).
var plannerNodes = sync.OnceValue(probePlanner)

// probePlanner plans `has(x.y) && x.z` and records the types of the
// nodes the planner builds for its parts.
func probePlanner() *plannerTypes {
	env, err := cel.NewEnv(cel.Variable("x", cel.DynType))
	if err != nil {
		return nil
	}
	ast, iss := env.Compile("has(x.y) && x.z")
	if iss.Err() != nil {
		return nil
	}
	args := ast.NativeRep().Expr().AsCall().Args()
	if len(args) != 2 {
		return nil
	}
	hasID, identID, selID := args[0].ID(), args[0].AsSelect().Operand().ID(), args[1].ID()
	var pt plannerTypes
	probe := func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
		ia, isAttr := i.(interpreter.InterpretableAttribute)
		if !isAttr {
			return i, nil
		}
		na, _ := ia.Attr().(interpreter.NamespacedAttribute)
		switch {
		case i.ID() == identID && pt.attr == nil:
			pt.attr, pt.absolute = reflect.TypeOf(i), reflect.TypeOf(na)
		case i.ID() == hasID && na != nil && len(na.Qualifiers()) == 1:
			pt.testOnly, pt.testOnlyQual = reflect.TypeOf(i), reflect.TypeOf(na.Qualifiers()[0])
		case i.ID() == selID && na != nil && len(na.Qualifiers()) == 1:
			pt.str = reflect.TypeOf(na.Qualifiers()[0])
		}
		return i, nil
	}
	if _, err := env.Program(ast, cel.CustomDecoratorV2(probe)); err != nil {
		return nil
	}
	if pt.attr == nil || pt.testOnly == nil || pt.absolute == nil || pt.str == nil || pt.testOnlyQual == nil ||
		pt.attr == pt.testOnly || pt.str == pt.testOnlyQual {
		return nil
	}
	return &pt
}

// typedPathOption returns the program option that gives the program of
// ast typed paths, or nil when it cannot have them: cel-go did not plan
// as expected, or an identifier of ast has a leading dot (`.object` beside
// a local `object`), which the planner's attributes resolve past local
// variables and typed paths would not.
func typedPathOption(ast *cel.Ast) cel.ProgramOption {
	if plannerNodes() == nil {
		return nil
	}
	for _, r := range ast.NativeRep().ReferenceMap() {
		if strings.HasPrefix(r.Name, ".") {
			return nil
		}
	}
	return cel.CustomDecoratorV2(decorateTypedPaths)
}

// decorateTypedPaths wraps the planner's attribute reads on variables and
// its presence tests.
func decorateTypedPaths(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	pt := plannerNodes()
	switch reflect.TypeOf(i) {
	case pt.attr:
		ia := i.(interpreter.InterpretableAttribute)
		if reflect.TypeOf(ia.Attr()) != pt.absolute {
			return i, nil // relative: its operand is not a variable
		}
		n := &pathNode{pathAttr{InterpretableAttribute: ia}}
		n.refresh()
		return n, nil
	case pt.testOnly:
		n := &presenceNode{pathAttr{InterpretableAttribute: i.(interpreter.InterpretableAttribute), testOnly: true}}
		n.refresh()
		if n.ok {
			return n, nil
		}
	}
	return i, nil
}

// fieldPath is a variable and the field names read from it.
type fieldPath struct {
	root  string
	names []string
	// keys are names as CEL strings: the qualifiers' own values.
	keys []ref.Val
}

// pathOf returns the path attr reads when it is a variable qualified by
// plain field names (the last one a presence test's when testOnly is
// set).
func pathOf(attr interpreter.Attribute, testOnly bool) (fieldPath, bool) {
	pt := plannerNodes()
	na, ok := attr.(interpreter.NamespacedAttribute)
	if !ok || reflect.TypeOf(attr) != pt.absolute || len(na.CandidateVariableNames()) != 1 {
		return fieldPath{}, false
	}
	p := fieldPath{root: na.CandidateVariableNames()[0]}
	qs := na.Qualifiers()
	for i, q := range qs {
		want := pt.str
		if testOnly && i == len(qs)-1 {
			want = pt.testOnlyQual
		}
		cq, isConst := q.(interpreter.ConstantQualifier)
		if !isConst || reflect.TypeOf(q) != want || q.IsOptional() {
			return fieldPath{}, false
		}
		key, isStr := cq.Value().(types.String)
		if !isStr {
			return fieldPath{}, false
		}
		p.names, p.keys = append(p.names, string(key)), append(p.keys, cq.Value())
	}
	return p, true
}

// walk resolves the variable in frame and selects the names but the last
// skip ones while the values are typed maps.
func (p *fieldPath) walk(frame *interpreter.ExecutionFrame, skip int) (any, bool) {
	v, found := frame.ResolveName(p.root)
	if !found {
		return nil, false
	}
	if n := len(p.names) - skip; n > 0 {
		return celvalue.SelectPath(v, p.names[:n], p.keys[:n])
	}
	return v, true
}

// pathAttr is a planner's node reading an attribute, with the fieldPath
// the attribute reads (the last name a presence test's when testOnly).
type pathAttr struct {
	interpreter.InterpretableAttribute
	path     fieldPath
	testOnly bool
	// ok: the attribute is a fieldPath (with a name, for a presence
	// test).
	ok bool
}

// refresh reads the attribute's path again; the planner adds qualifiers
// to the node after wrapping it.
func (n *pathAttr) refresh() {
	n.path, n.ok = pathOf(n.Attr(), n.testOnly)
	n.ok = n.ok && (!n.testOnly || len(n.path.names) > 0)
}

// AddQualifier adds q to the planner's attribute.
func (n *pathAttr) AddQualifier(q interpreter.Qualifier) (interpreter.Attribute, error) {
	a, err := n.InterpretableAttribute.AddQualifier(q)
	n.refresh()
	return a, err
}

// pathNode is the planner's read of an attribute on a variable; Exec
// reads it directly when it is a fieldPath on typed maps, or a variable
// alone (a comprehension's accumulator) holding a plain value.
type pathNode struct{ pathAttr }

// Exec returns the value the planner's node would.
func (n *pathNode) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	if n.ok {
		if v, ok := n.path.walk(frame, 0); ok {
			if len(n.path.names) > 0 {
				return v.(ref.Val) // what celvalue.SelectPath returned
			}
			if r, ok := plainValue(v); ok {
				return r
			}
		}
	}
	return n.InterpretableAttribute.Exec(frame)
}

// plainValue returns v when it is a value that cel-go's variable read
// returns as it is: not an error, optional, unknown or Go value, which
// the planner's node turns into errors or adapts.
func plainValue(v any) (ref.Val, bool) {
	switch v.(type) {
	case types.Bool, types.Int, types.String, types.Double:
		// v's own data word, where rebinding the value would box it.
		return v.(ref.Val), true
	}
	if celvalue.IsTyped(v) {
		return v.(ref.Val), true
	}
	return nil, false
}

// Eval is Exec on an activation.
func (n *pathNode) Eval(a interpreter.Activation) ref.Val { return n.Exec(interpreter.AsFrame(a)) }

// presenceNode is the planner's presence test `has(v.a.b)`; Exec tests
// it directly when v.a is a fieldPath on typed maps.
type presenceNode struct{ pathAttr }

// Exec returns the value the planner's node would.
func (n *presenceNode) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	if n.ok {
		if v, ok := n.path.walk(frame, 1); ok {
			last := len(n.path.names) - 1
			if present, ok := celvalue.Has(v, n.path.names[last], n.path.keys[last]); ok {
				return types.Bool(present)
			}
		}
	}
	return n.InterpretableAttribute.Exec(frame)
}

// Eval is Exec on an activation.
func (n *presenceNode) Eval(a interpreter.Activation) ref.Val { return n.Exec(interpreter.AsFrame(a)) }
