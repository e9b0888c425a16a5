package escaping_test

import (
	"regexp"
	"testing"

	"github.com/google/cel-go/common"
	"github.com/google/cel-go/parser"

	"github.com/vapkit/vapkit/celenv/escaping"
)

var identRE = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*$`)

func TestEscape(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{name: "plain", in: "foo", want: "foo", ok: true},
		{name: "single underscore", in: "a_b", want: "a_b", ok: true},
		{name: "reserved", in: "namespace", want: "__namespace__", ok: true},
		{name: "reserved true", in: "true", want: "__true__", ok: true},
		{name: "double underscore", in: "a__b", want: "a__underscores__b", ok: true},
		{name: "dot dash slash", in: "a.b-c/d", want: "a__dot__b__dash__c__slash__d", ok: true},
		{name: "triple underscore", in: "a___b", want: "a__underscores___b", ok: true},
		{name: "empty", in: "", ok: false},
		{name: "leading digit", in: "1a", ok: false},
		{name: "space", in: "a b", ok: false},
		{name: "non ascii", in: "é", ok: false},
		{name: "invalid utf8", in: "a\xff", ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := escaping.Escape(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Escape(%q) = %q, %v, want %q, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestUnescape(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{name: "plain", in: "foo", want: "foo", ok: true},
		{name: "reserved whole", in: "__in__", want: "in", ok: true},
		{name: "reserved inside", in: "a__in__", ok: false},
		{name: "unknown token", in: "__foo__", ok: false},
		{name: "escapes", in: "a__dot__b__dash__c__slash__d__underscores__e", want: "a.b-c/d__e", ok: true},
		{name: "lone underscores", in: "a__b", want: "a__b", ok: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := escaping.Unescape(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Unescape(%q) = %q, %v, want %q, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// FuzzEscape checks that an escaped name is a valid CEL identifier (one the
// parser accepts as a field selection) that unescapes to the original, and
// that Unescape never panics and is undone by Escape.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{
		"", "foo", "a_b", "a__b", "a___b", "__", "___", "_", "namespace", "__namespace__",
		"a.b-c/d", "x-__-y", "1a", "a b", "\xff", "__dot__", "a__dot__b", "__in__x",
		"if", "__if__", "_-_", "a__underscores__b", "-", ".", "/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		esc, ok := escaping.Escape(s)
		if ok {
			if !identRE.MatchString(esc) || escaping.IsReservedWord(esc) {
				t.Fatalf("Escape(%q) = %q, not a valid identifier", s, esc)
			}
			if _, iss := parser.Parse(common.NewTextSource("x." + esc)); len(iss.GetErrors()) > 0 {
				t.Fatalf("Escape(%q) = %q, which does not parse as a field: %v", s, esc, iss.ToDisplayString())
			}
			back, ok := escaping.Unescape(esc)
			if !ok || back != s {
				t.Fatalf("Unescape(Escape(%q) = %q) = %q, %v, want %q, true", s, esc, back, ok, s)
			}
		} else if esc != "" {
			t.Fatalf("Escape(%q) = %q, false, want an empty result", s, esc)
		}
		u, ok := escaping.Unescape(s)
		if !ok {
			return
		}
		if e, ok := escaping.Escape(u); ok {
			if back, ok := escaping.Unescape(e); !ok || back != u {
				t.Fatalf("Unescape(Escape(%q) = %q) = %q, %v, want %q", u, e, back, ok, u)
			}
		}
	})
}
