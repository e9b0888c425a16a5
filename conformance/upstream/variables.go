package upstream

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"sync"
	"unsafe"

	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// The servers before 1.36 type the variables of every policy with one
// object type per process (see variablesTemplates): compiling a policy adds
// its variables' types to that type, and a policy compiled later sees them.
// In a server the type grows with every policy it ever compiled, in the
// order its policy source happened to compile them (Go map order). Here
// each Cluster is a fresh server: while it compiles, the shared type holds
// that Cluster's own fields and no other's (compiles of all Clusters of the
// process are serialised by sharedVariables), and it compiles the bound
// policies in an order it is given, so that Outcomes can try every order
// that can matter (compileOrders).
var sharedVariables sync.Mutex

// compiler is the policy source's compile function.
type compiler = func(*validating.Policy) validating.Validator

// isolateVariables (a no-op from 1.36) makes plugin's policy source, when the plugin creates
// it, compile through cl: on its first compile request cl compiles every
// bound policy of the case in order (compileOrder first, then document
// order), each with the shared variables type holding exactly the fields
// the policies compiled before it in this Cluster added, and answers every
// request from those evaluators.
func (cl *Cluster) isolateVariables(plugin *validating.Plugin, compileOrder []string) error {
	if len(variablesTemplates()) == 0 {
		return nil // every policy has a variables type of its own
	}
	v := reflect.ValueOf(plugin.Plugin)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return errors.New("upstream: validating plugin has no generic plugin")
	}
	f := v.Elem().FieldByName("sourceFactory")
	if !f.IsValid() || f.Kind() != reflect.Func || f.Type().NumOut() != 1 {
		return errors.New("upstream: generic.Plugin has no field sourceFactory (k8s.io/apiserver changed?)")
	}
	field := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	factory := field.Interface()
	cl.isolateErr = errors.New("upstream: the plugin created no policy source")
	wrapped := reflect.MakeFunc(field.Type(), func(args []reflect.Value) []reflect.Value {
		out := reflect.ValueOf(factory).Call(args)
		src := out[0]
		if src.Kind() == reflect.Interface {
			src = src.Elem()
		}
		if src.Kind() != reflect.Pointer || src.IsNil() {
			cl.isolateErr = errors.New("upstream: policy source is not a pointer")
			return out
		}
		cf := src.Elem().FieldByName("compiler")
		if !cf.IsValid() || cf.Type() != reflect.TypeFor[compiler]() {
			cl.isolateErr = fmt.Errorf("upstream: policy source has no field compiler of type %v (k8s.io/apiserver changed?)", reflect.TypeFor[compiler]())
			return out
		}
		cfield := reflect.NewAt(cf.Type(), unsafe.Pointer(cf.UnsafeAddr())).Elem()
		orig := cfield.Interface().(compiler)
		cfield.Set(reflect.ValueOf(cl.compiler(orig, compileOrder)))
		cl.isolateErr = nil
		return out
	})
	field.Set(wrapped)
	return nil
}

// compiler returns the compile function cl's policy source uses.
func (cl *Cluster) compiler(orig compiler, compileOrder []string) compiler {
	return func(p *validating.Policy) validating.Validator {
		cl.compileOnce.Do(func() {
			cl.compiled = map[string]validating.Validator{}
			for _, name := range boundPolicyOrder(cl.c, compileOrder) {
				for _, q := range cl.c.Policies {
					if q.Name == name {
						cl.compiled[name] = cl.compileIsolated(orig, q.DeepCopy())
						break
					}
				}
			}
		})
		if v, ok := cl.compiled[p.Name]; ok {
			return v
		}
		return cl.compileIsolated(orig, p)
	}
}

// compileIsolated compiles p with the shared variables type holding cl's
// fields, and keeps the fields p's compile added.
func (cl *Cluster) compileIsolated(orig compiler, p *validating.Policy) validating.Validator {
	sharedVariables.Lock()
	defer sharedVariables.Unlock()
	templates := variablesTemplates()
	if cl.varFields == nil {
		cl.varFields = make([]map[string]*apiservercel.DeclField, len(templates))
	}
	for i, t := range templates {
		clear(t.Fields)
		maps.Copy(t.Fields, cl.varFields[i])
	}
	v := orig(p)
	for i, t := range templates {
		cl.varFields[i] = maps.Clone(t.Fields)
	}
	return v
}

// boundPolicyOrder returns the names of c's bound policies (those a
// binding names), those in first first and the rest in document order.
func boundPolicyOrder(c *Case, first []string) []string {
	bound := map[string]bool{}
	for _, b := range c.Bindings {
		bound[b.Spec.PolicyName] = true
	}
	var out []string
	for _, n := range first {
		if bound[n] && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, p := range c.Policies {
		if bound[p.Name] && !slices.Contains(out, p.Name) {
			out = append(out, p.Name)
		}
	}
	return out
}

// variableRead matches a read of a field of variables (a select, an
// optional select or a has() test); it also matches inside string
// literals, which only adds orders to try.
var variableRead = regexp.MustCompile(`\bvariables\s*\.\s*\??\s*([A-Za-z_][A-Za-z0-9_]*)`)

// compileOrders returns the compile orders of c's bound policies whose
// outcomes can differ on a server that types variables per process: every
// permutation of the bound policies that declare or read variables, when
// one of them reads a variable it has not declared before the read and
// another bound policy declares it; otherwise one order (nil: document
// order). It fails when there are more than limit permutations.
func compileOrders(c *Case, limit int) ([][]string, error) {
	if len(variablesTemplates()) == 0 {
		return [][]string{nil}, nil
	}
	bound := boundPolicyOrder(c, nil)
	var involved []string
	sensitive := false
	for _, p := range c.Policies {
		if !slices.Contains(bound, p.Name) {
			continue
		}
		own := map[string]bool{}
		var foreign []string
		read := func(expr string) bool {
			ms := variableRead.FindAllStringSubmatch(expr, -1)
			for _, m := range ms {
				if !own[m[1]] {
					foreign = append(foreign, m[1])
				}
			}
			return len(ms) > 0
		}
		reads := false
		for _, v := range p.Spec.Variables {
			reads = read(v.Expression) || reads
			own[v.Name] = true
		}
		for _, v := range p.Spec.Validations {
			reads = read(v.Expression) || reads
			reads = read(v.MessageExpression) || reads
		}
		for _, m := range p.Spec.MatchConditions {
			reads = read(m.Expression) || reads
		}
		for _, a := range p.Spec.AuditAnnotations {
			reads = read(a.ValueExpression) || reads
		}
		if reads || len(own) > 0 {
			involved = append(involved, p.Name)
		}
		for _, q := range c.Policies {
			if q.Name == p.Name || !slices.Contains(bound, q.Name) {
				continue
			}
			for _, v := range q.Spec.Variables {
				if slices.Contains(foreign, v.Name) {
					sensitive = true
				}
			}
		}
	}
	if !sensitive {
		return [][]string{nil}, nil
	}
	if factorial(len(involved)) > limit {
		return nil, fmt.Errorf("upstream: %d policies share variable names across policies: %d compile orders, more than %d", len(involved), factorial(len(involved)), limit)
	}
	var orders [][]string
	for k := range factorial(len(involved)) {
		orders = append(orders, nthPermutation(involved, k))
	}
	return orders, nil
}
