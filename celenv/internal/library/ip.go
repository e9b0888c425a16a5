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

// IPType is the CEL type of [IPValue] values. It is an opaque type named
// "net.IP", the name apiserver `pkg/cel/ip.go` gives it, and the [IP]
// library registers it so that expressions can write `type(x) == net.IP`.
var IPType = cel.OpaqueType("net.IP")

// IPValue is the CEL value of an IP address, as produced by `ip(string)` and
// `cidr.ip()`. The embedded address never carries a zone and is never an
// IPv4-mapped IPv6 address when it comes from the library functions.
//
// Two IPs are equal when their addresses are equal. The zero IP holds the
// invalid [netip.Addr].
type IPValue struct {
	netip.Addr
}

// Compile-time checks: IPValue is a CEL value with a size, which the runtime cost
// tracker reads for `size(ip)` and for the call costs of the CIDR functions.
var (
	_ ref.Val      = IPValue{}
	_ traits.Sizer = IPValue{}
)

// ConvertToNative converts the IP to a [netip.Addr] or to its string form,
// as apiserver `pkg/cel/ip.go` does.
func (d IPValue) ConvertToNative(typeDesc reflect.Type) (any, error) {
	if reflect.TypeFor[netip.Addr]().AssignableTo(typeDesc) {
		return d.Addr, nil
	}
	if reflect.TypeFor[string]().AssignableTo(typeDesc) {
		return d.Addr.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'IP' to '%v'", typeDesc)
}

// ConvertToType converts the IP to itself, to its type, or to a string.
// Any other target is an error value.
func (d IPValue) ConvertToType(typeVal ref.Type) ref.Val {
	switch typeVal {
	case IPType:
		return d
	case types.TypeType:
		return IPType
	case types.StringType:
		return types.String(d.Addr.String())
	}
	return types.NewErr("type conversion error from '%s' to '%s'", IPType, typeVal)
}

// Equal reports whether other is an IP with the same address. Comparing with
// a value of another type gives a "no such overload" error value, not false.
func (d IPValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(IPValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(d.Addr == o.Addr)
}

// Type returns [IPType].
func (d IPValue) Type() ref.Type {
	return IPType
}

// Value returns the embedded [netip.Addr].
func (d IPValue) Value() any {
	return d.Addr
}

// Size returns the length of the address in bytes, rounded up: 4 for IPv4,
// 16 for IPv6 and 0 for the zero IP. It feeds runtime cost, as in apiserver.
func (d IPValue) Size() ref.Val {
	return types.Int(bytesForBits(d.Addr.BitLen()))
}

// bytesForBits rounds a bit count up to whole bytes; negative counts give 0.
func bytesForBits(bits int) int {
	if bits <= 0 {
		return 0
	}
	return (bits + 7) / 8
}

// IP returns the Kubernetes IP address library, apiserver's
// "kubernetes.net.ip" (introduced with Kubernetes 1.30). It declares:
//
//	ip(string) net.IP                 // parse; errors on zones, IPv4-mapped IPv6 and malformed input
//	isIP(string) bool                 // whether ip(s) would succeed
//	ip.isCanonical(string) bool       // s is valid and already in canonical form; parse errors propagate
//	<net.IP>.family() int             // 4 or 6
//	<net.IP>.isUnspecified() bool
//	<net.IP>.isLoopback() bool
//	<net.IP>.isLinkLocalMulticast() bool
//	<net.IP>.isLinkLocalUnicast() bool
//	<net.IP>.isGlobalUnicast() bool
//	string(net.IP) string             // canonical form
//
// Parsing uses [netip.ParseAddr], which rejects IPv4 octets with leading
// zeros. Examples:
//
//	ip('10.0.0.1').family() == 4
//	ip.isCanonical('2001:DB8::1') // false
//	ip('fe80::1%eth0')            // error: IP address "fe80::1%eth0" with zone value is not allowed
func IP() cel.EnvOption {
	return cel.Lib(ipLib{})
}

// ipLib is the cel.SingletonLibrary behind [IP].
type ipLib struct{}

// LibraryName returns apiserver's name for the library, so that adding it
// twice to one environment is harmless.
func (ipLib) LibraryName() string { return "kubernetes.net.ip" }

// CompileOptions declares the type name and the functions.
func (ipLib) CompileOptions() []cel.EnvOption {
	ipArg := []*cel.Type{IPType}
	strArg := []*cel.Type{cel.StringType}
	predicate := func(name, id string, pred func(netip.Addr) bool) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload(id, ipArg, cel.BoolType,
			cel.UnaryBinding(ipPredicate(pred))))
	}
	return []cel.EnvOption{
		cel.Types(IPType),
		cel.Function("ip",
			cel.Overload("string_to_ip", strArg, IPType, cel.UnaryBinding(stringToIP))),
		cel.Function("isIP",
			cel.Overload("is_ip", strArg, cel.BoolType, cel.UnaryBinding(isIP))),
		cel.Function("ip.isCanonical",
			cel.Overload("ip_is_canonical", strArg, cel.BoolType, cel.UnaryBinding(ipIsCanonical))),
		cel.Function("family",
			cel.MemberOverload("ip_family", ipArg, cel.IntType, cel.UnaryBinding(ipFamily))),
		predicate("isUnspecified", "ip_is_unspecified", netip.Addr.IsUnspecified),
		predicate("isLoopback", "ip_is_loopback", netip.Addr.IsLoopback),
		predicate("isLinkLocalMulticast", "ip_is_link_local_multicast", netip.Addr.IsLinkLocalMulticast),
		predicate("isLinkLocalUnicast", "ip_is_link_local_unicast", netip.Addr.IsLinkLocalUnicast),
		predicate("isGlobalUnicast", "ip_is_global_unicast", netip.Addr.IsGlobalUnicast),
		cel.Function("string",
			cel.Overload("ip_to_string", ipArg, cel.StringType, cel.UnaryBinding(ipToString))),
	}
}

// ProgramOptions returns nothing; all bindings are declared with the functions.
func (ipLib) ProgramOptions() []cel.ProgramOption { return nil }

// parseIP parses s the way every IP function of the library does: netip
// syntax, no zone, no IPv4-mapped IPv6. The messages are apiserver's
// `library/ip.go` parseIPAddr texts; callers return them unwrapped.
func parseIP(s string) (netip.Addr, error) {
	addr, err := netip.ParseAddr(s)
	switch {
	case err != nil:
		return netip.Addr{}, fmt.Errorf("IP Address %q parse error during conversion from string: %v", s, err)
	case addr.Zone() != "":
		return netip.Addr{}, fmt.Errorf("IP address %q with zone value is not allowed", s)
	case addr.Is4In6():
		return netip.Addr{}, fmt.Errorf("IPv4-mapped IPv6 address %q is not allowed", s)
	}
	return addr, nil
}

// stringToIP is the binding of ip(string).
func stringToIP(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	addr, err := parseIP(s)
	if err != nil {
		return types.NewErr("%v", err)
	}
	return IPValue{Addr: addr}
}

// isIP is the binding of isIP(string).
func isIP(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	_, err := parseIP(s)
	return types.Bool(err == nil)
}

// ipIsCanonical is the binding of ip.isCanonical(string).
func ipIsCanonical(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	addr, err := parseIP(s)
	if err != nil {
		return types.NewErr("%v", err)
	}
	// netip prints exactly one (canonical) form per address.
	return types.Bool(addr.String() == s)
}

// ipFamily is the binding of family(); the error is unreachable for parsed addresses.
func ipFamily(arg ref.Val) ref.Val {
	ip, ok := arg.(IPValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	switch {
	case ip.Addr.Is4():
		return types.Int(4)
	case ip.Addr.Is6():
		return types.Int(6)
	}
	return types.NewErr("IP address %q is not an IPv4 or IPv6 address", ip.Addr.String())
}

// ipPredicate adapts a netip.Addr method to a unary CEL binding.
func ipPredicate(pred func(netip.Addr) bool) func(ref.Val) ref.Val {
	return func(arg ref.Val) ref.Val {
		ip, ok := arg.(IPValue)
		if !ok {
			return types.MaybeNoSuchOverloadErr(arg)
		}
		return types.Bool(pred(ip.Addr))
	}
}

// ipToString is the binding of string(net.IP): the canonical form.
func ipToString(arg ref.Val) ref.Val {
	ip, ok := arg.(IPValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	return types.String(ip.Addr.String())
}
