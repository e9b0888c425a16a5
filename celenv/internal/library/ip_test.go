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

func TestIP(t *testing.T) {
	t.Parallel()
	runCELCases(t, netEnv(t), []celCase{
		// ip(string) and its errors
		{name: "ipv4", expr: "ip('192.168.0.1') == ip('192.168.0.1')"},
		{name: "ipv6", expr: "ip('2001:db8::68') == ip('2001:0db8:0:0:0:0:0:68')"},
		{name: "ipv4 too long", expr: "ip('192.168.0.1.0') == ip('1.2.3.4')",
			evalErr: `IP Address "192.168.0.1.0" parse error during conversion from string: ParseAddr("192.168.0.1.0"): IPv4 address too long`},
		{name: "ipv6 triple colon", expr: "ip('2001:db8:::68') == ip('::1')",
			evalErr: `IP Address "2001:db8:::68" parse error during conversion from string: ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit (at ":68")`},
		{name: "leading zero octet", expr: "ip('01.2.3.4') == ip('1.2.3.4')",
			evalErr: `IP Address "01.2.3.4" parse error during conversion from string: ParseAddr("01.2.3.4"): IPv4 field has octet with leading zero`},
		{name: "empty", expr: "ip('') == ip('1.2.3.4')",
			evalErr: `IP Address "" parse error during conversion from string: ParseAddr(""): unable to parse IP`},
		{name: "with prefix", expr: "ip('1.2.3.4/24') == ip('1.2.3.4')",
			evalErr: `IP Address "1.2.3.4/24" parse error during conversion from string: ParseAddr("1.2.3.4/24"): unexpected character (at "/24")`},
		{name: "zone rejected", expr: "ip('fe80::1%eth0') == ip('fe80::1')",
			evalErr: `IP address "fe80::1%eth0" with zone value is not allowed`},
		{name: "ipv4-mapped rejected", expr: "ip('::ffff:1.2.3.4') == ip('1.2.3.4')",
			evalErr: `IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed`},
		{name: "ipv4-mapped hex rejected", expr: "ip('::ffff:102:304') == ip('1.2.3.4')",
			evalErr: `IPv4-mapped IPv6 address "::ffff:102:304" is not allowed`},

		// isIP
		{name: "isIP", expr: "isIP('192.168.0.1') && isIP('2001:db8::68')"},
		{name: "isIP rejects", expr: "!isIP('192.168.0.1.0') && !isIP('2001:db8:::68') && !isIP('fe80::1%eth0')" +
			" && !isIP('::ffff:1.2.3.4') && !isIP('') && !isIP('10.0.0.0/8')"},
		{name: "isIP of cidr", expr: "isIP(cidr('192.168.0.0/24'))",
			compileErr: "found no matching overload for 'isIP' applied to '(net.CIDR)'"},

		// ip.isCanonical
		{name: "isCanonical", expr: "ip.isCanonical('127.0.0.1') && ip.isCanonical('2001:db8::68')"},
		{name: "isCanonical upper case", expr: "!ip.isCanonical('2001:DB8::68')"},
		{name: "isCanonical zeros", expr: "!ip.isCanonical('2001:db8::0:0:0:abcd')"},
		{name: "isCanonical invalid", expr: "ip.isCanonical('127.0.0.1.0')",
			evalErr: `IP Address "127.0.0.1.0" parse error during conversion from string: ParseAddr("127.0.0.1.0"): IPv4 address too long`},
		{name: "isCanonical zone", expr: "ip.isCanonical('fe80::1%eth0')",
			evalErr: `IP address "fe80::1%eth0" with zone value is not allowed`},
		{name: "isCanonical ipv4-mapped", expr: "ip.isCanonical('::ffff:1.2.3.4')",
			evalErr: `IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed`},

		// family and the predicates
		{name: "family", expr: "ip('192.168.0.1').family() == 4 && ip('2001:db8::68').family() == 6"},
		{name: "isUnspecified", expr: "ip('0.0.0.0').isUnspecified() && ip('::').isUnspecified()" +
			" && !ip('127.0.0.1').isUnspecified() && !ip('::1').isUnspecified()"},
		{name: "isLoopback", expr: "ip('127.0.0.1').isLoopback() && ip('127.1.2.3').isLoopback() && ip('::1').isLoopback()" +
			" && !ip('1.2.3.4').isLoopback() && !ip('2001:db8::abcd').isLoopback()"},
		{name: "isLinkLocalMulticast", expr: "ip('224.0.0.1').isLinkLocalMulticast() && ip('ff02::1').isLinkLocalMulticast()" +
			" && !ip('224.0.1.1').isLinkLocalMulticast() && !ip('fd00::1').isLinkLocalMulticast()"},
		{name: "isLinkLocalUnicast", expr: "ip('169.254.169.254').isLinkLocalUnicast() && ip('fe80::1').isLinkLocalUnicast()" +
			" && !ip('192.168.0.1').isLinkLocalUnicast() && !ip('fd80::1').isLinkLocalUnicast()"},
		{name: "isGlobalUnicast", expr: "ip('192.168.0.1').isGlobalUnicast() && ip('2001:db8::abcd').isGlobalUnicast()" +
			" && !ip('255.255.255.255').isGlobalUnicast() && !ip('ff00::1').isGlobalUnicast()"},
		{name: "dyn receiver", expr: "dyn(ip('1.2.3.4')).family() == 4"},
		{name: "dyn non-ip receiver", expr: "dyn('x').family() == 4", evalErr: "no such overload: family(string)"},

		// string, type, equality
		{name: "string canonicalizes", expr: "string(ip('2001:DB8::1')) == '2001:db8::1'"},
		{name: "string dyn", expr: "string(dyn(ip('1.2.3.4'))) == '1.2.3.4'"},
		{name: "type", expr: "type(ip('192.168.0.1')) == net.IP"},
		{name: "equality", expr: "ip('::1') == ip('0:0:0:0:0:0:0:1') && ip('1.2.3.4') != ip('1.2.3.5')"},
		{name: "family differs", expr: "ip('0.0.0.0') != ip('::')"},
		{name: "equality with string", expr: "dyn(ip('1.2.3.4')) == '1.2.3.4'", evalErr: "no such overload"},
		{name: "in list", expr: "ip('1.2.3.4') in [ip('1.2.3.4')]"},
		{name: "size is not declared", expr: "size(ip('1.2.3.4')) == 4",
			compileErr: "found no matching overload for 'size' applied to '(net.IP)'"},
	})
}

func TestIPOverloadIDs(t *testing.T) {
	t.Parallel()
	checkOverloadIDs(t, netEnv(t), map[string][]string{
		"ip":                   {"string_to_ip", "cidr_ip"},
		"isIP":                 {"is_ip"},
		"ip.isCanonical":       {"ip_is_canonical"},
		"family":               {"ip_family"},
		"isUnspecified":        {"ip_is_unspecified"},
		"isLoopback":           {"ip_is_loopback"},
		"isLinkLocalMulticast": {"ip_is_link_local_multicast"},
		"isLinkLocalUnicast":   {"ip_is_link_local_unicast"},
		"isGlobalUnicast":      {"ip_is_global_unicast"},
	}, map[string][]string{
		"string": {"ip_to_string", "cidr_to_string"},
	})
}

func TestIPValue(t *testing.T) {
	t.Parallel()
	v4 := library.IPValue{Addr: netip.MustParseAddr("10.0.0.1")}
	v6 := library.IPValue{Addr: netip.MustParseAddr("2001:db8::1")}

	sizes := []struct {
		name string
		ip   library.IPValue
		want ref.Val
	}{
		{name: "ipv4", ip: v4, want: types.Int(4)},
		{name: "ipv6", ip: v6, want: types.Int(16)},
		{name: "zero", ip: library.IPValue{}, want: types.Int(0)},
	}
	for _, tc := range sizes {
		t.Run("Size/"+tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.ip.Size(); got != tc.want {
				t.Errorf("Size() = %v, want %v", got, tc.want)
			}
		})
	}

	checkNetValue(t, netValueCase{
		v:          v4,
		vStr:       "10.0.0.1",
		native:     v4.Addr,
		nativeType: reflect.TypeFor[netip.Addr](),
		strV:       v6,
		str:        "2001:db8::1",
		name:       "IP",
		typ:        library.IPType,
		typeName:   "net.IP",
		same:       library.IPValue{Addr: netip.MustParseAddr("10.0.0.1")},
		other:      v6,
		otherName:  "other",
	})
}

// FuzzIP checks that the IP functions never panic and agree with each other
// and with netip on any string.
func FuzzIP(f *testing.F) {
	for _, s := range []string{
		"", "1.2.3.4", "0.0.0.0", "255.255.255.255", "256.1.1.1", "01.2.3.4", "::", "::1", "2001:DB8::1",
		"2001:db8:::68", "fe80::1%eth0", "::ffff:1.2.3.4", "::ffff:102:304", "1.2.3.4/24", " 1.2.3.4", "1:2:3:4:5:6:7:8",
	} {
		f.Add(s)
	}
	env := newEnv(f, library.IP(), library.CIDR(), cel.Variable("s", cel.StringType))
	parse := mustProgram(f, env, "ip(s)")
	valid := mustProgram(f, env, "isIP(s)")
	canonical := mustProgram(f, env, "ip.isCanonical(s)")
	props := mustProgram(f, env,
		"ip(string(ip(s))) == ip(s) && ip.isCanonical(string(ip(s))) && ip(s).family() in [4, 6]")
	f.Fuzz(func(t *testing.T, s string) {
		in := map[string]any{"s": s}
		addr, perr := netip.ParseAddr(s)
		wantOK := perr == nil && addr.Zone() == "" && !addr.Is4In6()

		got, _, err := parse.Eval(in)
		if ok := err == nil; ok != wantOK {
			t.Fatalf("ip(%q) = %v, %v; want success %v", s, got, err, wantOK)
		}
		if isIP, _, err := valid.Eval(in); err != nil || isIP != types.Bool(wantOK) {
			t.Fatalf("isIP(%q) = %v, %v, want %v", s, isIP, err, wantOK)
		}
		canon, _, cerr := canonical.Eval(in)
		if !wantOK {
			if cerr == nil {
				t.Fatalf("ip.isCanonical(%q) = %v, want an error", s, canon)
			}
			return
		}
		if got.(library.IPValue).Addr != addr {
			t.Fatalf("ip(%q) = %v, want %v", s, got, addr)
		}
		if cerr != nil || canon != types.Bool(addr.String() == s) {
			t.Fatalf("ip.isCanonical(%q) = %v, %v, want %v", s, canon, cerr, addr.String() == s)
		}
		if ok, _, err := props.Eval(in); err != nil || ok != types.True {
			t.Fatalf("properties of ip(%q) = %v, %v, want true", s, ok, err)
		}
	})
}

func ExampleIP() {
	env, err := cel.NewEnv(library.IP(), cel.Variable("addr", cel.StringType))
	if err != nil {
		fmt.Println(err)
		return
	}
	ast, iss := env.Compile("isIP(addr) && ip(addr).family() == 6 && ip.isCanonical(addr)")
	if iss.Err() != nil {
		fmt.Println(iss.Err())
		return
	}
	prg, err := env.Program(ast)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, addr := range []string{"2001:db8::1", "2001:DB8::1", "10.0.0.1", "::ffff:10.0.0.1"} {
		out, _, err := prg.Eval(map[string]any{"addr": addr})
		fmt.Println(addr, out, err)
	}
	// Output:
	// 2001:db8::1 true <nil>
	// 2001:DB8::1 false <nil>
	// 10.0.0.1 false <nil>
	// ::ffff:10.0.0.1 false <nil>
}
