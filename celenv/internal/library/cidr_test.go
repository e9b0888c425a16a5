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
	env, err := cel.NewEnv(library.CIDR())
	if err != nil {
		t.Fatalf("cel.NewEnv() = %v", err)
	}
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

	t.Run("ConvertToNative", func(t *testing.T) {
		t.Parallel()
		if got, err := c.ConvertToNative(reflect.TypeFor[netip.Prefix]()); err != nil || got != c.Prefix {
			t.Errorf("ConvertToNative(netip.Prefix) = %v, %v, want %v", got, err, c.Prefix)
		}
		if got, err := c.ConvertToNative(reflect.TypeFor[string]()); err != nil || got != "10.0.0.1/8" {
			t.Errorf("ConvertToNative(string) = %v, %v, want 10.0.0.1/8", got, err)
		}
		_, err := c.ConvertToNative(reflect.TypeFor[int]())
		if want := "type conversion error from 'CIDR' to 'int'"; err == nil || err.Error() != want {
			t.Errorf("ConvertToNative(int) error = %v, want %q", err, want)
		}
	})

	t.Run("ConvertToType", func(t *testing.T) {
		t.Parallel()
		if got := c.ConvertToType(library.CIDRType); got != c {
			t.Errorf("ConvertToType(CIDRType) = %v, want %v", got, c)
		}
		if got := c.ConvertToType(types.TypeType); got != library.CIDRType {
			t.Errorf("ConvertToType(TypeType) = %v, want %v", got, library.CIDRType)
		}
		if got := c.ConvertToType(types.StringType); got != types.String("10.0.0.1/8") {
			t.Errorf("ConvertToType(StringType) = %v, want 10.0.0.1/8", got)
		}
		got := c.ConvertToType(types.IntType)
		if err, ok := got.(*types.Err); !ok || err.Error() != "type conversion error from 'net.CIDR' to 'int'" {
			t.Errorf("ConvertToType(IntType) = %v, want type conversion error", got)
		}
	})

	t.Run("Equal", func(t *testing.T) {
		t.Parallel()
		masked := library.CIDRValue{Prefix: c.Prefix.Masked()}
		if got := c.Equal(library.CIDRValue{Prefix: netip.MustParsePrefix("10.0.0.1/8")}); got != types.True {
			t.Errorf("Equal(same) = %v, want true", got)
		}
		if got := c.Equal(masked); got != types.False {
			t.Errorf("Equal(masked) = %v, want false", got)
		}
		if got := c.Equal(types.String("10.0.0.1/8")); !types.IsError(got) {
			t.Errorf("Equal(string) = %v, want an error value", got)
		}
	})

	t.Run("TypeAndValue", func(t *testing.T) {
		t.Parallel()
		if got := c.Type(); got != library.CIDRType || got.TypeName() != "net.CIDR" {
			t.Errorf("Type() = %v, want net.CIDR", got)
		}
		if got := c.Value(); got != c.Prefix {
			t.Errorf("Value() = %v, want %v", got, c.Prefix)
		}
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
	env, err := cel.NewEnv(library.IP(), library.CIDR(), cel.Variable("s", cel.StringType))
	if err != nil {
		f.Fatalf("cel.NewEnv() = %v", err)
	}
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
	for _, expr := range []string{
		"cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))",
		"cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')",
		"cidr('10.0.0.1/8') == cidr('10.0.0.0/8')",
		"string(cidr('10.0.0.1/8').masked())",
		"cidr('10.0.0.0')",
	} {
		ast, iss := env.Compile(expr)
		if iss.Err() != nil {
			fmt.Println(iss.Err())
			return
		}
		prg, err := env.Program(ast)
		if err != nil {
			fmt.Println(err)
			return
		}
		out, _, err := prg.Eval(cel.NoVars())
		if err != nil {
			fmt.Printf("%s: error: %v\n", expr, err)
			continue
		}
		fmt.Printf("%s: %v\n", expr, out)
	}
	// Output:
	// cidr('10.0.0.0/8').containsIP(ip('10.1.2.3')): true
	// cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16'): true
	// cidr('10.0.0.1/8') == cidr('10.0.0.0/8'): false
	// string(cidr('10.0.0.1/8').masked()): 10.0.0.0/8
	// cidr('10.0.0.0'): error: network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("10.0.0.0"): no '/'
}
