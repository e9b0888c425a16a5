package library

import (
	"fmt"
	"net/netip"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// CIDRType is the CEL type of [CIDRValue] values. It is an opaque type named
// "net.CIDR", the name apiserver `pkg/cel/cidr.go` gives it, and the [CIDR]
// library registers it so that expressions can write `type(x) == net.CIDR`.
var CIDRType = cel.OpaqueType("net.CIDR")

// CIDRValue is the CEL value of a network prefix, as produced by `cidr(string)`.
// The prefix keeps the address exactly as written, host bits included:
// `cidr('10.0.0.1/8')` and `cidr('10.0.0.0/8')` are different values, and
// `masked()` clears the host bits.
//
// Two CIDRs are equal when their prefixes are equal (address and length).
// The zero CIDR holds the invalid [netip.Prefix].
type CIDRValue struct {
	netip.Prefix
}

// Compile-time checks: CIDRValue is a CEL value with a size, which the runtime
// cost tracker reads for `size(cidr)` and for the CIDR call costs.
var (
	_ ref.Val      = CIDRValue{}
	_ traits.Sizer = CIDRValue{}
)

// ConvertToNative converts the CIDR to a [netip.Prefix] or to its string
// form, as apiserver `pkg/cel/cidr.go` does.
func (d CIDRValue) ConvertToNative(typeDesc reflect.Type) (any, error) {
	if reflect.TypeFor[netip.Prefix]().AssignableTo(typeDesc) {
		return d.Prefix, nil
	}
	if reflect.TypeFor[string]().AssignableTo(typeDesc) {
		return d.Prefix.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'CIDR' to '%v'", typeDesc)
}

// ConvertToType converts the CIDR to itself, to its type, or to a string.
// Any other target is an error value.
func (d CIDRValue) ConvertToType(typeVal ref.Type) ref.Val {
	switch typeVal {
	case CIDRType:
		return d
	case types.TypeType:
		return CIDRType
	case types.StringType:
		return types.String(d.Prefix.String())
	}
	return types.NewErr("type conversion error from '%s' to '%s'", CIDRType, typeVal)
}

// Equal reports whether other is a CIDR with the same address and prefix
// length. Host bits count. Comparing with a value of another type gives a
// "no such overload" error value, not false.
func (d CIDRValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(CIDRValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(d.Prefix == o.Prefix)
}

// Type returns [CIDRType].
func (d CIDRValue) Type() ref.Type {
	return CIDRType
}

// Value returns the embedded [netip.Prefix].
func (d CIDRValue) Value() any {
	return d.Prefix
}

// Size returns the prefix length in bytes, rounded up (for example 3 for a
// /24 and 0 for a /0 or the zero CIDR). Note that it is the length of the
// prefix, not of the address, exactly as apiserver computes it for cost.
func (d CIDRValue) Size() ref.Val {
	return types.Int(bytesForBits(d.Prefix.Bits()))
}

// CIDR returns the Kubernetes CIDR library, apiserver's "kubernetes.net.cidr"
// (introduced with Kubernetes 1.30). It declares:
//
//	cidr(string) net.CIDR                     // parse; host bits are kept
//	isCIDR(string) bool                       // whether cidr(s) would succeed
//	<net.CIDR>.containsIP(net.IP|string) bool
//	<net.CIDR>.containsCIDR(net.CIDR|string) bool // overlaps and is not shorter
//	<net.CIDR>.ip() net.IP                    // the address as written, unmasked
//	<net.CIDR>.masked() net.CIDR              // host bits cleared
//	<net.CIDR>.prefixLength() int
//	string(net.CIDR) string
//
// The functions that take or return net.IP values are only useful together
// with the [IP] library, as in apiserver. Examples:
//
//	cidr('10.0.0.0/8').containsIP('10.1.2.3')
//	cidr('10.0.0.1/8').masked() == cidr('10.0.0.0/8')
//	cidr('10.0.0.1/8') != cidr('10.0.0.0/8')
//	cidr('::ffff:1.2.3.4/120') // error: IPv4-mapped IPv6 address "::ffff:1.2.3.4/120" is not allowed
func CIDR() cel.EnvOption {
	return cel.Lib(cidrLib{})
}

// CIDRBefore132 is [CIDR] as the API servers of Kubernetes 1.30 and 1.31
// implement it. Their containsCIDR compared c.masked() with the argument's
// address under c's prefix length without masking it, so an argument with
// host bits set (cidr('10.0.0.0/8').containsCIDR('10.1.2.3/16')) or, in
// general, any argument whose address is not c's network address at c's
// length, was not contained; 1.32 tests overlap instead (k8s.io/apiserver
// v0.31.14 vs v0.32.13 pkg/cel/library/cidr.go, containsCIDR).
func CIDRBefore132() cel.EnvOption {
	return cel.Lib(cidrLib{legacyContains: true})
}

// cidrLib is the cel.SingletonLibrary behind [CIDR].
type cidrLib struct {
	legacyContains bool // see CIDRBefore132
}

// LibraryName returns apiserver's name for the library, so that adding it
// twice to one environment is harmless.
func (cidrLib) LibraryName() string { return "kubernetes.net.cidr" }

// CompileOptions declares the type name and the functions.
func (l cidrLib) CompileOptions() []cel.EnvOption {
	containsCIDR := cidrContainsCIDR
	if l.legacyContains {
		containsCIDR = cidrContainsCIDRBefore132
	}
	cidrArg := []*cel.Type{CIDRType}
	strArg := []*cel.Type{cel.StringType}
	return []cel.EnvOption{
		cel.Types(CIDRType),
		cel.Function("cidr",
			cel.Overload("string_to_cidr", strArg, CIDRType, cel.UnaryBinding(stringToCIDR))),
		cel.Function("isCIDR",
			cel.Overload("is_cidr", strArg, cel.BoolType, cel.UnaryBinding(isCIDR))),
		cel.Function("containsIP",
			cel.MemberOverload("cidr_contains_ip_string", []*cel.Type{CIDRType, cel.StringType}, cel.BoolType,
				cel.BinaryBinding(cidrContainsIPString)),
			cel.MemberOverload("cidr_contains_ip_ip", []*cel.Type{CIDRType, IPType}, cel.BoolType,
				cel.BinaryBinding(cidrContainsIP))),
		cel.Function("containsCIDR",
			cel.MemberOverload("cidr_contains_cidr_string", []*cel.Type{CIDRType, cel.StringType}, cel.BoolType,
				// The string is parsed with cidr() semantics; a parse
				// failure is returned as the error.
				cel.BinaryBinding(func(c, s ref.Val) ref.Val { return containsCIDR(c, stringToCIDR(s)) })),
			cel.MemberOverload("cidr_contains_cidr", []*cel.Type{CIDRType, CIDRType}, cel.BoolType,
				cel.BinaryBinding(containsCIDR))),
		// The overload id "cidr_ip" is load-bearing: the cost estimator
		// charges this member ip() a flat 1, unlike the global ip(string).
		cel.Function("ip",
			cel.MemberOverload("cidr_ip", cidrArg, IPType, cel.UnaryBinding(cidrIP))),
		cel.Function("prefixLength",
			cel.MemberOverload("cidr_prefix_length", cidrArg, cel.IntType, cel.UnaryBinding(cidrPrefixLength))),
		cel.Function("masked",
			cel.MemberOverload("cidr_masked", cidrArg, CIDRType, cel.UnaryBinding(cidrMasked))),
		cel.Function("string",
			cel.Overload("cidr_to_string", cidrArg, cel.StringType, cel.UnaryBinding(cidrToString))),
	}
}

// ProgramOptions returns nothing; all bindings are declared with the functions.
func (cidrLib) ProgramOptions() []cel.ProgramOption { return nil }

// parseCIDR parses s as netip prefix syntax and rejects IPv4-mapped IPv6
// addresses. Its parse message already starts with "network address parse
// error during conversion from string: ", and stringToCIDR adds the same
// prefix again, so users see it twice, as with apiserver `library/cidr.go`.
func parseCIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("network address parse error during conversion from string: %v", err)
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("IPv4-mapped IPv6 address %q is not allowed", s)
	}
	return p, nil
}

// stringToCIDR is the binding of cidr(string).
func stringToCIDR(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	p, err := parseCIDR(s)
	if err != nil {
		return types.NewErr("network address parse error during conversion from string: %v", err)
	}
	return CIDRValue{Prefix: p}
}

// isCIDR is the binding of isCIDR(string).
func isCIDR(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	_, err := parseCIDR(s)
	return types.Bool(err == nil)
}

// cidrContainsIPString parses the string with ip() semantics. When that
// fails the result is a "no such overload" error, not the parse error:
// apiserver reports the receiver rather than the failed argument here, and
// we keep that message.
func cidrContainsIPString(c, s ref.Val) ref.Val {
	return cidrContainsIP(c, stringToIP(s))
}

// cidrContainsIP is the binding of containsIP(net.IP).
func cidrContainsIP(c, other ref.Val) ref.Val {
	cidr, ok := c.(CIDRValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	ip, ok := other.(IPValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(c)
	}
	return types.Bool(cidr.Prefix.Contains(ip.Addr))
}

// cidrContainsCIDR reports whether other lies inside c: the two prefixes
// overlap and c is not longer than other.
func cidrContainsCIDR(c, other ref.Val) ref.Val {
	cidr, ok := c.(CIDRValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(c)
	}
	inner, ok := other.(CIDRValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(cidr.Prefix.Overlaps(inner.Prefix) && cidr.Prefix.Bits() <= inner.Prefix.Bits())
}

// cidrContainsCIDRBefore132 is containsCIDR of Kubernetes 1.30 and 1.31:
// c's masked prefix must equal the argument's address taken at c's length,
// unmasked, and c must not be longer.
func cidrContainsCIDRBefore132(c, other ref.Val) ref.Val {
	cidr, ok := c.(CIDRValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(c)
	}
	inner, ok := other.(CIDRValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	same := cidr.Prefix.Masked() == netip.PrefixFrom(inner.Prefix.Addr(), cidr.Prefix.Bits())
	return types.Bool(same && cidr.Prefix.Bits() <= inner.Prefix.Bits())
}

// cidrIP is the binding of the member ip(): the address as written.
func cidrIP(arg ref.Val) ref.Val {
	cidr, ok := arg.(CIDRValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	return IPValue{Addr: cidr.Prefix.Addr()}
}

// cidrPrefixLength is the binding of prefixLength().
func cidrPrefixLength(arg ref.Val) ref.Val {
	cidr, ok := arg.(CIDRValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	return types.Int(cidr.Prefix.Bits())
}

// cidrMasked is the binding of masked(): host bits cleared.
func cidrMasked(arg ref.Val) ref.Val {
	cidr, ok := arg.(CIDRValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	return CIDRValue{Prefix: cidr.Prefix.Masked()}
}

// cidrToString is the binding of string(net.CIDR), host bits kept.
func cidrToString(arg ref.Val) ref.Val {
	cidr, ok := arg.(CIDRValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	return types.String(cidr.Prefix.String())
}
