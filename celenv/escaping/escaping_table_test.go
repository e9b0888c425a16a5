package escaping_test

import (
	"regexp"
	"testing"

	"github.com/vapkit/vapkit/celenv/escaping"
)

// celIdent matches the identifiers the CEL grammar accepts.
var celIdent = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*$`)

// reservedWordList is the set of words the CEL grammar reserves.
var reservedWordList = []string{
	"true", "false", "null", "in", "as", "break", "const", "continue", "else",
	"for", "function", "if", "import", "let", "loop", "package", "namespace",
	"return", "var", "void", "while",
}

func TestEscapeTable(t *testing.T) {
	tests := []struct {
		name, escaped string
		unescapable   bool
	}{
		// '.', '-', '/' and '__' cannot appear in CEL identifiers.
		{name: "a.a", escaped: "a__dot__a"},
		{name: "a-a", escaped: "a__dash__a"},
		{name: "a__a", escaped: "a__underscores__a"},
		{name: "a.-/__a", escaped: "a__dot____dash____slash____underscores__a"},
		{name: "a._a", escaped: "a__dot___a"},
		{name: "a__.__a", escaped: "a__underscores____dot____underscores__a"},
		{name: "a___a", escaped: "a__underscores___a"},
		{name: "a____a", escaped: "a__underscores____underscores__a"},
		{name: "a__dot__a", escaped: "a__underscores__dot__underscores__a"},
		{name: "a__underscores__a", escaped: "a__underscores__underscores__underscores__a"},
		{name: "app.kubernetes.io/name", escaped: "app__dot__kubernetes__dot__io__slash__name"},
		{name: "-", escaped: "__dash__"},
		{name: "__", escaped: "__underscores__"},
		// Reserved words.
		{name: "true", escaped: "__true__"},
		{name: "false", escaped: "__false__"},
		{name: "null", escaped: "__null__"},
		{name: "in", escaped: "__in__"},
		{name: "as", escaped: "__as__"},
		{name: "break", escaped: "__break__"},
		{name: "const", escaped: "__const__"},
		{name: "continue", escaped: "__continue__"},
		{name: "else", escaped: "__else__"},
		{name: "for", escaped: "__for__"},
		{name: "function", escaped: "__function__"},
		{name: "if", escaped: "__if__"},
		{name: "import", escaped: "__import__"},
		{name: "let", escaped: "__let__"},
		{name: "loop", escaped: "__loop__"},
		{name: "package", escaped: "__package__"},
		{name: "namespace", escaped: "__namespace__"},
		{name: "return", escaped: "__return__"},
		{name: "var", escaped: "__var__"},
		{name: "void", escaped: "__void__"},
		{name: "while", escaped: "__while__"},
		// Names that cannot be escaped.
		{name: "", unescapable: true},
		{name: "@", unescapable: true},
		{name: "1up", unescapable: true},
		{name: "👑", unescapable: true},
		{name: "a b", unescapable: true},
		{name: "a:b", unescapable: true},
		{name: "/👑", unescapable: true},
		{name: "a__👑", unescapable: true},
		{name: "é", unescapable: true},
		// Function and macro names live in another namespace.
		{name: "has", escaped: "has"},
		{name: "all", escaped: "all"},
		{name: "exists", escaped: "exists"},
		{name: "exists_one", escaped: "exists_one"},
		{name: "filter", escaped: "filter"},
		{name: "size", escaped: "size"},
		{name: "contains", escaped: "contains"},
		{name: "startsWith", escaped: "startsWith"},
		{name: "endsWith", escaped: "endsWith"},
		{name: "matches", escaped: "matches"},
		{name: "duration", escaped: "duration"},
		{name: "timestamp", escaped: "timestamp"},
		{name: "getDate", escaped: "getDate"},
		{name: "getDayOfMonth", escaped: "getDayOfMonth"},
		{name: "getDayOfWeek", escaped: "getDayOfWeek"},
		{name: "getFullYear", escaped: "getFullYear"},
		{name: "getHours", escaped: "getHours"},
		{name: "getMilliseconds", escaped: "getMilliseconds"},
		{name: "getMinutes", escaped: "getMinutes"},
		{name: "getMonth", escaped: "getMonth"},
		{name: "getSeconds", escaped: "getSeconds"},
		// A single underscore is kept, as are words that merely contain a
		// reserved word.
		{name: "_if", escaped: "_if"},
		{name: "_has", escaped: "_has"},
		{name: "_int", escaped: "_int"},
		{name: "_anything", escaped: "_anything"},
		{name: "iff", escaped: "iff"},
		{name: "a_b_c", escaped: "a_b_c"},
		{name: "_", escaped: "_"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := escaping.Escape(tc.name)
			if tc.unescapable {
				if ok {
					t.Errorf("Escape(%q) = %q, true; want not escapable", tc.name, got)
				}
				return
			}
			if !ok || got != tc.escaped {
				t.Fatalf("Escape(%q) = %q, %v; want %q, true", tc.name, got, ok, tc.escaped)
			}
			if !celIdent.MatchString(got) {
				t.Errorf("Escape(%q) = %q, not a CEL identifier", tc.name, got)
			}
			back, ok := escaping.Unescape(tc.escaped)
			if !ok || back != tc.name {
				t.Errorf("Unescape(%q) = %q, %v; want %q, true", tc.escaped, back, ok, tc.name)
			}
		})
	}
}

func TestUnescapeTable(t *testing.T) {
	tests := []struct {
		escaped, want string
		ok            bool
	}{
		{escaped: "__int__extra", ok: false},
		{escaped: "__illegal__", ok: false},
		{escaped: "a__if__", ok: false},
		{escaped: "__if____if__", ok: false},
		{escaped: "__a b__", ok: false},
		{escaped: "plain", want: "plain", ok: true},
		{escaped: "", want: "", ok: true},
		{escaped: "___dot__", want: "_.", ok: true},
		{escaped: "__dot_x__", want: "__dot_x__", ok: true},
		{escaped: "____", want: "____", ok: true},
		{escaped: "a__", want: "a__", ok: true},
		{escaped: "__dash____dash__", want: "--", ok: true},
		{escaped: "__namespace__", want: "namespace", ok: true},
	}
	for _, tc := range tests {
		t.Run(tc.escaped, func(t *testing.T) {
			got, ok := escaping.Unescape(tc.escaped)
			if ok != tc.ok || (ok && got != tc.want) {
				t.Errorf("Unescape(%q) = %q, %v; want %q, %v", tc.escaped, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestEscapeShortcut ports upstream's TestCanSkipRegex: names made only of
// identifier characters without "__" are returned unchanged, names with an
// escaped character are rewritten, and a character outside the allowed set
// makes the name unreachable wherever it appears.
func TestEscapeShortcut(t *testing.T) {
	tests := []struct {
		name      string
		unchanged bool
		invalid   bool
	}{
		{name: "a.a"},
		{name: "a-a"},
		{name: "a__a"},
		{name: "a.-/__a"},
		{name: "a_a", unchanged: true},
		{name: "a_a_a", unchanged: true},
		{name: "@", invalid: true},
		{name: "👑", invalid: true},
		{name: "/👑", invalid: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := escaping.Escape(tc.name)
			switch {
			case tc.invalid:
				if ok {
					t.Errorf("Escape(%q) = %q, true; want not escapable", tc.name, got)
				}
			case !ok:
				t.Errorf("Escape(%q) not escapable, want escapable", tc.name)
			case (got == tc.name) != tc.unchanged:
				t.Errorf("Escape(%q) = %q; unchanged = %v, want %v", tc.name, got, got == tc.name, tc.unchanged)
			}
		})
	}
}

func TestIsReservedWord(t *testing.T) {
	for _, w := range reservedWordList {
		if !escaping.IsReservedWord(w) {
			t.Errorf("IsReservedWord(%q) = false, want true", w)
		}
	}
	for _, w := range []string{"int", "has", "object", "Namespace", "__if__", ""} {
		if escaping.IsReservedWord(w) {
			t.Errorf("IsReservedWord(%q) = true, want false", w)
		}
	}
}
