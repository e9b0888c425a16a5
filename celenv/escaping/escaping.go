// Package escaping holds the rules by which Kubernetes makes schema
// property names into CEL field names: [Escape] and [Unescape], and the
// words the CEL grammar reserves ([IsReservedWord]). Admission policies
// evaluate object, oldObject and params without schemas and never escape;
// type checking, and the names of variables, do.
package escaping

// reservedWords are the identifiers the CEL grammar reserves. A property with
// one of these names is reachable only in its escaped form __<word>__.
var reservedWords = map[string]bool{
	"true": true, "false": true, "null": true, "in": true,
	"as": true, "break": true, "const": true, "continue": true, "else": true,
	"for": true, "function": true, "if": true, "import": true, "let": true,
	"loop": true, "package": true, "namespace": true, "return": true,
	"var": true, "void": true, "while": true,
}

// IsReservedWord reports whether s is one of the words the CEL grammar
// reserves, which schema-typed expressions reach only as __s__.
func IsReservedWord(s string) bool { return reservedWords[s] }

// Escape returns the CEL field name under which a schema property named ident
// is reachable in typed (schema-aware) expressions, following the Kubernetes
// rules: a reserved word becomes __word__; "__", ".", "-" and "/" become
// __underscores__, __dot__, __dash__ and __slash__. It reports false when the
// property cannot be reached at all: an empty name, a name starting with a
// digit, or one holding a character outside [a-zA-Z0-9_./-].
//
// Runtime evaluation of admission policies never escapes: object, oldObject
// and params are schemaless there. Escaping matters for type checking and for
// variables (see [Unescape]).
func Escape(ident string) (string, bool) {
	if ident == "" || (ident[0] >= '0' && ident[0] <= '9') {
		return "", false
	}
	if reservedWords[ident] {
		return "__" + ident + "__", true
	}
	plain := true
	for i := 0; i < len(ident); i++ {
		c := ident[i]
		switch {
		case c == '-' || c == '.' || c == '/':
			plain = false
		case c == '_':
			if i > 0 && ident[i-1] == '_' {
				plain = false
			}
		case isIdentChar(c):
		default:
			return "", false
		}
	}
	if plain {
		return ident, true
	}
	out := make([]byte, 0, len(ident)+16)
	for i := 0; i < len(ident); i++ {
		switch c := ident[i]; {
		case c == '_' && i+1 < len(ident) && ident[i+1] == '_':
			out = append(out, "__underscores__"...)
			i++
		case c == '.':
			out = append(out, "__dot__"...)
		case c == '-':
			out = append(out, "__dash__"...)
		case c == '/':
			out = append(out, "__slash__"...)
		default:
			out = append(out, c)
		}
	}
	return string(out), true
}

func isIdentChar(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// Unescape reverses [Escape]. Every token of the form __x__ (x without
// underscores) must be a known escape; a reserved-word token is accepted only
// when it is the whole name. It reports false otherwise.
func Unescape(escaped string) (string, bool) {
	var out []byte
	last := 0
	for i := 0; i+1 < len(escaped); {
		if escaped[i] != '_' || escaped[i+1] != '_' {
			i++
			continue
		}
		k := i + 2
		for k < len(escaped) && escaped[k] != '_' {
			k++
		}
		if k == i+2 || k+1 >= len(escaped) || escaped[k+1] != '_' {
			i++
			continue
		}
		// escaped[i:k+2] is a token __word__.
		word := escaped[i+2 : k]
		var repl string
		switch word {
		case "underscores":
			repl = "__"
		case "dot":
			repl = "."
		case "dash":
			repl = "-"
		case "slash":
			repl = "/"
		default:
			if !reservedWords[word] || k+2-i != len(escaped) {
				return "", false
			}
			repl = word
		}
		out = append(out, escaped[last:i]...)
		out = append(out, repl...)
		i = k + 2
		last = i
	}
	if out == nil {
		return escaped, true
	}
	out = append(out, escaped[last:]...)
	return string(out), true
}
