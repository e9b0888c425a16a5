package library_test

import (
	"fmt"
	"net/netip"
	"reflect"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/vapkit/vapkit/celenv/internal/library"
)

// cidrParseErr is the doubled prefix apiserver puts on netip parse errors.
const cidrParseErr = "network address parse error during conversion from string: " +
	"network address parse error during conversion from string: "

func TestCIDR(t *testing.T) {
	t.Parallel()
	runCELCases(t, netEnv(t), []celCase{
		// cidr(string) and its errors
		{name: "ipv4", expr: "cidr('192.168.0.0/24') == cidr('192.168.0.0/24')"},
		{name: "ipv6", expr: "cidr('2001:db8::/32') == cidr('2001:0db8::/32')"},
		{name: "no slash", expr: "cidr('bad') == cidr('1.0.0.0/8')",
			evalErr: cidrParseErr + `netip.ParsePrefix("bad"): no '/'`},
		{name: "ipv4 no bits", expr: "cidr('192.168.0.0/') == cidr('1.0.0.0/8')",
			evalErr: cidrParseErr + `netip.ParsePrefix("192.168.0.0/"): bad bits after slash: ""`},
		{name: "ipv6 no bits", expr: "cidr('2001:db8::/') == cidr('1.0.0.0/8')",
			evalErr: cidrParseErr + `netip.ParsePrefix("2001:db8::/"): bad bits after slash: ""`},
		{name: "too long", expr: "cidr('192.168.0.0/33') == cidr('1.0.0.0/8')",
			evalErr: cidrParseErr + `netip.ParsePrefix("192.168.0.0/33"): prefix length out of range`},
		{name: "zone", expr: "cidr('fe80::1%eth0/64') == cidr('fe80::/64')",
			evalErr: cidrParseErr + `netip.ParsePrefix("fe80::1%eth0/64"): IPv6 zones cannot be present in a prefix`},
		{name: "ipv4-mapped rejected", expr: "cidr('::ffff:1.2.3.4/120') == cidr('1.2.3.0/24')",
			evalErr: `network address parse error during conversion from string: IPv4-mapped IPv6 address "::ffff:1.2.3.4/120" is not allowed`},

		// isCIDR
		{name: "isCIDR", expr: "isCIDR('192.168.0.0/24') && isCIDR('::1/128') && isCIDR('192.168.0.1/16')"},
		{name: "isCIDR rejects", expr: "!isCIDR('192.168.0.0/33') && !isCIDR('::1/129') && !isCIDR('1.2.3.4')" +
			" && !isCIDR('::ffff:1.2.3.4/120') && !isCIDR('')"},

		// equality keeps host bits; masked clears them
		{name: "host bits matter", expr: "cidr('10.0.0.1/8') != cidr('10.0.0.0/8')"},
		{name: "masked", expr: "cidr('10.0.0.1/8').masked() == cidr('10.0.0.0/8')" +
			" && cidr('2001:db8:1::/32').masked() == cidr('2001:db8::/32')"},
		{name: "masked already canonical", expr: "cidr('192.168.0.0/24') == cidr('192.168.0.0/24').masked()"},
		{name: "prefix length matters", expr: "cidr('10.0.0.0/8') != cidr('10.0.0.0/9')"},
		{name: "equality with int", expr: "dyn(cidr('1.2.3.4/32')) == 1", evalErr: "no such overload"},
		{name: "equality with ip", expr: "dyn(ip('1.2.3.4')) == cidr('1.2.3.4/32')", evalErr: "no such overload"},

		// ip, prefixLength, string, type
		{name: "ip unmasked", expr: "cidr('192.168.0.1/24').ip() == ip('192.168.0.1') && cidr('::1/128').ip().family() == 6"},
		{name: "prefixLength", expr: "cidr('192.168.0.0/16').prefixLength() == 16 && cidr('::1/128').prefixLength() == 128"},
		{name: "string", expr: "string(cidr('10.0.0.1/8')) == '10.0.0.1/8' && string(cidr('2001:DB8::/32')) == '2001:db8::/32'"},
		{name: "type", expr: "type(cidr('192.168.0.0/24')) == net.CIDR"},
		{name: "dyn receiver", expr: "dyn(cidr('1.2.3.4/32')).ip().family() == 4"},

		// containsIP
		{name: "containsIP ip", expr: "cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))" +
			" && !cidr('192.168.0.0/24').containsIP(ip('192.168.1.1'))"},
		{name: "containsIP string", expr: "cidr('192.168.0.0/24').containsIP('192.168.0.1')" +
			" && !cidr('192.168.0.0/24').containsIP('192.168.1.1')"},
		{name: "containsIP ipv6", expr: "cidr('2001:db8::/32').containsIP(ip('2001:db8::1'))" +
			" && !cidr('2001:db8::/32').containsIP('2001:dc8::1')"},
		{name: "containsIP other family", expr: "!cidr('0.0.0.0/0').containsIP(ip('::1'))"},
		{name: "containsIP unmasked", expr: "cidr('10.1.2.3/8').containsIP('10.200.0.1')"},
		// apiserver reports the receiver, not the parse failure, here.
		{name: "containsIP bad string", expr: "cidr('192.168.0.0/24').containsIP('bad')", evalErr: "no such overload"},
		{name: "containsIP ipv4-mapped string", expr: "cidr('192.168.0.0/24').containsIP('::ffff:192.168.0.1')",
			evalErr: "no such overload"},

		// containsCIDR
		{name: "containsCIDR cidr", expr: "cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/25'))" +
			" && cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.1/32'))" +
			" && !cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/23'))" +
			" && !cidr('192.168.0.0/24').containsCIDR(cidr('192.169.0.1/32'))"},
		{name: "containsCIDR itself", expr: "cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/24'))"},
		{name: "containsCIDR string", expr: "cidr('2001:db8::/32').containsCIDR('2001:db8::/33')" +
			" && !cidr('2001:db8::/32').containsCIDR('2001:db8::/31')"},
		{name: "containsCIDR other family", expr: "!cidr('::/0').containsCIDR(cidr('192.168.0.0/24'))" +
			" && !cidr('0.0.0.0/0').containsCIDR('::/0')"},
		{name: "containsCIDR bad string", expr: "cidr('192.168.0.0/24').containsCIDR('bad')",
			evalErr: cidrParseErr + `netip.ParsePrefix("bad"): no '/'`},
		{name: "containsCIDR ipv4-mapped string", expr: "cidr('192.168.0.0/24').containsCIDR('::ffff:1.2.3.4/120')",
			evalErr: `network address parse error during conversion from string: IPv4-mapped IPv6 address "::ffff:1.2.3.4/120" is not allowed`},

		{name: "size is not declared", expr: "size(cidr('10.0.0.0/8')) == 1",
			compileErr: "found no matching overload for 'size' applied to '(net.CIDR)'"},
	})
}

func TestCIDROverloadIDs(t *testing.T) {
	t.Parallel()
	checkOverloadIDs(t, netEnv(t), map[string][]string{
		"cidr":         {"string_to_cidr"},
		"isCIDR":       {"is_cidr"},
		"containsIP":   {"cidr_contains_ip_string", "cidr_contains_ip_ip"},
		"containsCIDR": {"cidr_contains_cidr_string", "cidr_contains_cidr"},
		"prefixLength": {"cidr_prefix_length"},
		"masked":       {"cidr_masked"},
	}, nil)
}

// TestCIDRAlone shows that the CIDR library works without the IP library
// for everything that does not name an IP.
func TestCIDRAlone(t *testing.T) {
	t.Parallel()
	env := newEnv(t, library.CIDR())
	runCELCases(t, env, []celCase{
		{name: "containsIP string", expr: "cidr('10.0.0.0/8').containsIP('10.0.0.1')"},
		{name: "ip value", expr: "type(cidr('10.0.0.1/8').ip()) == type(cidr('10.0.0.2/8').ip())"},
		{name: "ip function", expr: "ip('10.0.0.1')", compileErr: "found no matching overload for 'ip'"},
	})
}

func TestCIDRValue(t *testing.T) {
	t.Parallel()
	c := library.CIDRValue{Prefix: netip.MustParsePrefix("10.0.0.1/8")}

	sizes := []struct {
		name string
		cidr string
		want ref.Val
	}{
		{name: "slash 0", cidr: "0.0.0.0/0", want: types.Int(0)},
		{name: "slash 1", cidr: "128.0.0.0/1", want: types.Int(1)},
		{name: "slash 8", cidr: "10.0.0.0/8", want: types.Int(1)},
		{name: "slash 24", cidr: "10.0.0.0/24", want: types.Int(3)},
		{name: "slash 32", cidr: "10.0.0.0/32", want: types.Int(4)},
		{name: "slash 127", cidr: "::/127", want: types.Int(16)},
		{name: "slash 128", cidr: "::1/128", want: types.Int(16)},
	}
	for _, tc := range sizes {
		t.Run("Size/"+tc.name, func(t *testing.T) {
			t.Parallel()
			v := library.CIDRValue{Prefix: netip.MustParsePrefix(tc.cidr)}
			if got := v.Size(); got != tc.want {
				t.Errorf("Size() = %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("Size/zero", func(t *testing.T) {
		t.Parallel()
		if got := (library.CIDRValue{}).Size(); got != types.Int(0) {
			t.Errorf("Size() = %v, want 0", got)
		}
	})

	checkNetValue(t, netValueCase{
		v:          c,
		vStr:       "10.0.0.1/8",
		native:     c.Prefix,
		nativeType: reflect.TypeFor[netip.Prefix](),
		strV:       c,
		str:        "10.0.0.1/8",
		name:       "CIDR",
		typ:        library.CIDRType,
		typeName:   "net.CIDR",
		same:       library.CIDRValue{Prefix: netip.MustParsePrefix("10.0.0.1/8")},
		other:      library.CIDRValue{Prefix: c.Prefix.Masked()},
		otherName:  "masked",
	})
}

// FuzzCIDR checks that the CIDR functions never panic and agree with each
// other and with netip on any string.
func FuzzCIDR(f *testing.F) {
	for _, s := range []string{
		"", "bad", "10.0.0.0/8", "10.0.0.1/8", "0.0.0.0/0", "192.168.0.0/33", "192.168.0.0/", "01.0.0.0/8",
		"::/0", "::1/128", "2001:DB8::/32", "::1/129", "fe80::1%eth0/64", "::ffff:1.2.3.4/120", "1.2.3.4", "10.0.0.0/08",
	} {
		f.Add(s)
	}
	env := newEnv(f, library.IP(), library.CIDR(), cel.Variable("s", cel.StringType))
	parse := mustProgram(f, env, "cidr(s)")
	valid := mustProgram(f, env, "isCIDR(s)")
	props := mustProgram(f, env, "cidr(s).masked().containsCIDR(cidr(s)) && cidr(s).containsCIDR(s)"+
		" && cidr(s).containsIP(cidr(s).ip()) && cidr(string(cidr(s))) == cidr(s)"+
		" && cidr(s).masked() == cidr(string(cidr(s).masked()))"+
		" && cidr(s).prefixLength() <= (cidr(s).ip().family() == 4 ? 32 : 128)")
	f.Fuzz(func(t *testing.T, s string) {
		in := map[string]any{"s": s}
		prefix, perr := netip.ParsePrefix(s)
		wantOK := perr == nil && !prefix.Addr().Is4In6()

		got, _, err := parse.Eval(in)
		if ok := err == nil; ok != wantOK {
			t.Fatalf("cidr(%q) = %v, %v; want success %v", s, got, err, wantOK)
		}
		if isCIDR, _, err := valid.Eval(in); err != nil || isCIDR != types.Bool(wantOK) {
			t.Fatalf("isCIDR(%q) = %v, %v, want %v", s, isCIDR, err, wantOK)
		}
		if !wantOK {
			return
		}
		if c, ok := got.(library.CIDRValue); !ok || c.Prefix != prefix {
			t.Fatalf("cidr(%q) = %v, want %v", s, got, prefix)
		}
		if ok, _, err := props.Eval(in); err != nil || ok != types.True {
			t.Fatalf("properties of cidr(%q) = %v, %v, want true", s, ok, err)
		}
	})
}

func ExampleCIDR() {
	env, err := cel.NewEnv(library.IP(), library.CIDR())
	if err != nil {
		fmt.Println(err)
		return
	}
	printEvals(env,
		"cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))",
		"cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')",
		"cidr('10.0.0.1/8') == cidr('10.0.0.0/8')",
		"string(cidr('10.0.0.1/8').masked())",
		"cidr('10.0.0.0')",
	)
	// Output:
	// cidr('10.0.0.0/8').containsIP(ip('10.1.2.3')): true
	// cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16'): true
	// cidr('10.0.0.1/8') == cidr('10.0.0.0/8'): false
	// string(cidr('10.0.0.1/8').masked()): 10.0.0.0/8
	// cidr('10.0.0.0'): error: network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("10.0.0.0"): no '/'
}
