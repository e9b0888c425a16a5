package library

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"k8s.io/apimachinery/pkg/api/resource"
)

// QuantityType is the CEL type of [QuantityValue], named kubernetes.Quantity
// as in apiserver pkg/cel/quantity.go.
var QuantityType = cel.ObjectType("kubernetes.Quantity")

// errQuantityNotInteger is reported by asInteger when the quantity cannot be
// represented as an int64 without loss.
var errQuantityNotInteger = errors.New("cannot convert value to integer")

// QuantityValue is the CEL value of a Kubernetes [resource.Quantity].
//
// The functions quantity and isQuantity create plain QuantityValue values,
// while add and sub return *QuantityValue pointers, exactly as apiserver does.
// That distinction is observable: Equal only accepts a non-pointer operand,
// so `quantity("1").add(1) == quantity("2")` is true but
// `quantity("2") == quantity("1").add(1)` fails with "no such overload".
//
// Quantity must not be nil for a value that reaches CEL; the library never
// creates such a value and never mutates the quantity it wraps.
type QuantityValue struct {
	// Quantity is the wrapped quantity. It is shared, not copied.
	Quantity *resource.Quantity
}

// ConvertToNative implements [ref.Val]. It supports *resource.Quantity
// (a copy) and string (the canonical form).
func (q QuantityValue) ConvertToNative(typeDesc reflect.Type) (any, error) {
	if q.Quantity != nil {
		if reflect.TypeOf(q.Quantity).AssignableTo(typeDesc) {
			c := q.Quantity.DeepCopy()
			return &c, nil
		}
		if reflect.TypeOf("").AssignableTo(typeDesc) {
			return q.Quantity.String(), nil
		}
	}
	return nil, fmt.Errorf("type conversion error from 'Quantity' to '%v'", typeDesc)
}

// ConvertToType implements [ref.Val]. Only the identity conversion and
// type() are supported.
func (q QuantityValue) ConvertToType(typeVal ref.Type) ref.Val {
	switch {
	case typeVal == nil:
		return types.NewErr("type conversion error from '%s' to '<nil>'", QuantityType)
	case typeVal == types.TypeType:
		return QuantityType
	case typeVal.TypeName() == QuantityType.TypeName():
		return q
	default:
		return types.NewErr("type conversion error from '%s' to '%s'", QuantityType, typeVal)
	}
}

// Equal implements [ref.Val]. Quantities are equal when they denote the same
// amount (1Gi == 1024Mi). The operand must be a QuantityValue, not a pointer
// to one; see the type documentation.
func (q QuantityValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(QuantityValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	if q.Quantity == nil || o.Quantity == nil {
		return types.Bool(q.Quantity == o.Quantity)
	}
	return types.Bool(q.Quantity.Equal(*o.Quantity))
}

// String returns the quantity in canonical form, e.g. "1536Mi".
func (q QuantityValue) String() string {
	if q.Quantity == nil {
		return "<nil>"
	}
	return q.Quantity.String()
}

// Type implements [ref.Val] and returns [QuantityType].
func (q QuantityValue) Type() ref.Type {
	return QuantityType
}

// Value implements [ref.Val] and returns the wrapped *resource.Quantity.
func (q QuantityValue) Value() any {
	return q.Quantity
}

// Quantity returns the Kubernetes quantity library, as apiserver
// pkg/cel/library Quantity:
//
//	quantity(string) kubernetes.Quantity     // resource.ParseQuantity; its error on failure
//	isQuantity(string) bool
//	sign(kubernetes.Quantity) int            // a global function, not a member
//	<Quantity>.isGreaterThan(<Quantity>) bool
//	<Quantity>.isLessThan(<Quantity>) bool
//	<Quantity>.compareTo(<Quantity>) int      // -1, 0 or 1
//	<Quantity>.asApproximateFloat() double
//	<Quantity>.asInteger() int               // error "cannot convert value to integer"
//	<Quantity>.isInteger() bool
//	<Quantity>.add(<Quantity>|int) kubernetes.Quantity
//	<Quantity>.sub(<Quantity>|int) kubernetes.Quantity
//
// Equality is described on [QuantityValue]. There is no string(quantity)
// conversion.
func Quantity() cel.EnvOption {
	return cel.Lib(quantityLib{})
}

// quantityLib is the [cel.SingletonLibrary] behind [Quantity].
type quantityLib struct{}

// LibraryName returns the name apiserver registers the library under.
func (quantityLib) LibraryName() string { return "kubernetes.quantity" }

// Types returns the CEL types the library introduces.
func (quantityLib) Types() []*cel.Type { return []*cel.Type{QuantityType} }

// CompileOptions declares the functions; the overload IDs are apiserver's,
// since cost estimation and tooling key on them.
func (quantityLib) CompileOptions() []cel.EnvOption {
	q, i, b, d, s := QuantityType, cel.IntType, cel.BoolType, cel.DoubleType, cel.StringType
	qq := []*cel.Type{q, q}
	return []cel.EnvOption{
		cel.Function("quantity",
			cel.Overload("string_to_quantity", []*cel.Type{s}, q, cel.UnaryBinding(stringToQuantity))),
		cel.Function("isQuantity",
			cel.Overload("is_quantity_string", []*cel.Type{s}, b, cel.UnaryBinding(isQuantity))),
		cel.Function("sign",
			cel.Overload("quantity_sign", []*cel.Type{q}, i, cel.UnaryBinding(quantitySign))),
		cel.Function("isGreaterThan",
			cel.MemberOverload("quantity_is_greater_than", qq, b, cel.BinaryBinding(quantityCompare(func(c int) ref.Val { return types.Bool(c == 1) })))),
		cel.Function("isLessThan",
			cel.MemberOverload("quantity_is_less_than", qq, b, cel.BinaryBinding(quantityCompare(func(c int) ref.Val { return types.Bool(c == -1) })))),
		cel.Function("compareTo",
			cel.MemberOverload("quantity_compare_to", qq, i, cel.BinaryBinding(quantityCompare(func(c int) ref.Val { return types.Int(c) })))),
		cel.Function("asApproximateFloat",
			cel.MemberOverload("quantity_get_float", []*cel.Type{q}, d, cel.UnaryBinding(quantityApproximateFloat))),
		cel.Function("asInteger",
			cel.MemberOverload("quantity_get_int", []*cel.Type{q}, i, cel.UnaryBinding(quantityAsInteger))),
		cel.Function("isInteger",
			cel.MemberOverload("quantity_is_integer", []*cel.Type{q}, b, cel.UnaryBinding(quantityIsInteger))),
		cel.Function("add",
			cel.MemberOverload("quantity_add", qq, q, cel.BinaryBinding(quantityArith(false))),
			cel.MemberOverload("quantity_add_int", []*cel.Type{q, i}, q, cel.BinaryBinding(quantityArith(false)))),
		cel.Function("sub",
			cel.MemberOverload("quantity_sub", qq, q, cel.BinaryBinding(quantityArith(true))),
			cel.MemberOverload("quantity_sub_int", []*cel.Type{q, i}, q, cel.BinaryBinding(quantityArith(true)))),
	}
}

// ProgramOptions implements [cel.Library]; the library has none.
func (quantityLib) ProgramOptions() []cel.ProgramOption { return nil }

// quantityOf extracts the quantity from a QuantityValue or *QuantityValue.
func quantityOf(v ref.Val) (*resource.Quantity, bool) {
	q, ok := v.Value().(*resource.Quantity)
	return q, ok && q != nil
}

func stringToQuantity(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return types.WrapErr(err)
	}
	return QuantityValue{Quantity: &q}
}

func isQuantity(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	_, err := resource.ParseQuantity(s)
	return types.Bool(err == nil)
}

func quantitySign(arg ref.Val) ref.Val {
	q, ok := quantityOf(arg)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	return types.Int(q.Sign())
}

func quantityApproximateFloat(arg ref.Val) ref.Val {
	q, ok := quantityOf(arg)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	return types.Double(q.AsApproximateFloat64())
}

func quantityIsInteger(arg ref.Val) ref.Val {
	q, ok := quantityOf(arg)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	_, exact := q.AsInt64()
	return types.Bool(exact)
}

func quantityAsInteger(arg ref.Val) ref.Val {
	q, ok := quantityOf(arg)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	v, exact := q.AsInt64()
	if !exact {
		return types.WrapErr(errQuantityNotInteger)
	}
	return types.Int(v)
}

// quantityCompare returns a binding that compares two quantities with
// resource.Quantity.Cmp and maps the result with conv.
func quantityCompare(conv func(int) ref.Val) func(lhs, rhs ref.Val) ref.Val {
	return func(lhs, rhs ref.Val) ref.Val {
		a, ok := quantityOf(lhs)
		if !ok {
			return types.MaybeNoSuchOverloadErr(lhs)
		}
		b, ok := quantityOf(rhs)
		if !ok {
			return types.MaybeNoSuchOverloadErr(rhs)
		}
		return conv(a.Cmp(*b))
	}
}

// quantityArith returns the binding for add (subtract false) or sub
// (subtract true). The operand is a quantity or an int, which counts as a
// decimal quantity. The receiver is copied, never modified, and the result is
// a *QuantityValue as upstream returns (see [QuantityValue]).
func quantityArith(subtract bool) func(lhs, rhs ref.Val) ref.Val {
	return func(lhs, rhs ref.Val) ref.Val {
		a, ok := quantityOf(lhs)
		if !ok {
			return types.MaybeNoSuchOverloadErr(lhs)
		}
		var b resource.Quantity
		switch v := rhs.Value().(type) {
		case *resource.Quantity:
			if v == nil {
				return types.MaybeNoSuchOverloadErr(rhs)
			}
			b = *v
		case int64:
			b = *resource.NewQuantity(v, resource.DecimalExponent)
		default:
			return types.MaybeNoSuchOverloadErr(rhs)
		}
		res := a.DeepCopy()
		if subtract {
			res.Sub(b)
		} else {
			res.Add(b)
		}
		return &QuantityValue{Quantity: &res}
	}
}
