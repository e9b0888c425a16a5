package library_test

import (
	"fmt"
	"net/url"
	"reflect"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"github.com/vapkit/vapkit/celenv/internal/library"
)

func TestURLs(t *testing.T) {
	t.Parallel()
	const full = "'https://user:pass@example.com:80/path?query=val#fragment'"
	runCELCases(t, netEnv(t), []celCase{
		// url and isURL
		{name: "absolute URI", expr: "url(" + full + ").getScheme() == 'https'"},
		{name: "absolute path", expr: "url('/absolute-path').getEscapedPath() == '/absolute-path'"},
		{name: "bad port", expr: "url('https://a:b:c/') == url('/')",
			evalErr: `URL parse error during conversion from string: parse "https://a:b:c/": invalid port ":b:c" after host`},
		{name: "relative", expr: "url('../relative-path') == url('/')",
			evalErr: `URL parse error during conversion from string: parse "../relative-path": invalid URI for request`},
		{name: "empty", expr: "url('') == url('/')",
			evalErr: `URL parse error during conversion from string: parse "": empty url`},
		{name: "unclosed bracket", expr: "url('http://[::1') == url('/')",
			evalErr: `URL parse error during conversion from string: parse "http://[::1": missing ']' in host`},
		{name: "isURL", expr: "isURL(" + full + ") && isURL('/absolute-path')"},
		{name: "isURL is laxer than url", expr: "isURL('// ') && url('// ') == url('/')",
			evalErr: `URL parse error during conversion from string: parse "// ": invalid character " " in host name`},
		{name: "isURL rejects", expr: "!isURL('https://a:b:c/') && !isURL('../relative-path') && !isURL('')"},

		// components
		{name: "getScheme", expr: "url('/path').getScheme() == '' && url('https://example.com/').getScheme() == 'https'"},
		{name: "getHost", expr: "url('https://example.com:80/').getHost() == 'example.com:80'" +
			" && url('https://example.com/').getHost() == 'example.com'" +
			" && url('https://[::1]:80/').getHost() == '[::1]:80'" +
			" && url('https://[::1]/').getHost() == '[::1]' && url('/path').getHost() == ''"},
		{name: "getHostname", expr: "url('https://example.com:80/').getHostname() == 'example.com'" +
			" && url('https://127.0.0.1:80/').getHostname() == '127.0.0.1'" +
			" && url('https://[::1]:80/').getHostname() == '::1' && url('/path').getHostname() == ''"},
		{name: "getPort", expr: "url('https://example.com:80/').getPort() == '80'" +
			" && url('https://example.com/').getPort() == '' && url('/path').getPort() == ''"},
		{name: "getEscapedPath", expr: "url('https://example.com/path').getEscapedPath() == '/path'" +
			" && url('https://example.com/path with spaces/').getEscapedPath() == '/path%20with%20spaces/'" +
			" && url('https://example.com').getEscapedPath() == ''"},
		{name: "fragment is not path", expr: "url('https://example.com/a#frag').getEscapedPath() == '/a'"},
		{name: "fragment is not query", expr: "url('https://example.com/?q=1#frag').getQuery() == {'q': ['1']}"},
		{name: "getQuery", expr: "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}"},
		{name: "getQuery unescapes", expr: "url('https://example.com/path?key with spaces=value with spaces').getQuery()" +
			" == {'key with spaces': ['value with spaces']}"},
		{name: "getQuery empty", expr: "url('https://example.com/path?').getQuery() == {}" +
			" && url('https://example.com/path').getQuery() == {}"},
		{name: "getQuery drops malformed", expr: "url('https://example.com/path?a=1;b=2').getQuery() == {}" +
			" && url('https://example.com/path?a=%zz').getQuery() == {}"},
		{name: "dyn receiver", expr: "dyn(url('https://x/')).getScheme() == 'https'"},

		// equality and type
		{name: "equality", expr: "url('https://example.com/a') == url('https://example.com/a')" +
			" && url('https://example.com/a') != url('https://example.com/b')"},
		{name: "equality is textual", expr: "url('https://EXAMPLE.com/a') != url('https://example.com/a')"},
		{name: "equality with string", expr: "dyn(url('https://example.com/a')) == 'x'", evalErr: "no such overload"},
		{name: "type name", expr: "type(url('/a')) == type(url('/b'))"},
		{name: "type not an identifier", expr: "type(url('/a')) == kubernetes.URL",
			compileErr: "undeclared reference to 'kubernetes'"},
		{name: "size is not declared", expr: "size(url('/x')) == 2",
			compileErr: "found no matching overload for 'size' applied to '(kubernetes.URL)'"},
	})
}

func TestURLsOverloadIDs(t *testing.T) {
	t.Parallel()
	checkOverloadIDs(t, netEnv(t), map[string][]string{
		"url":            {"string_to_url"},
		"isURL":          {"is_url_string"},
		"getScheme":      {"url_get_scheme"},
		"getHost":        {"url_get_host"},
		"getHostname":    {"url_get_hostname"},
		"getPort":        {"url_get_port"},
		"getEscapedPath": {"url_get_escaped_path"},
		"getQuery":       {"url_get_query"},
	}, nil)
}

func TestURLValue(t *testing.T) {
	t.Parallel()
	u, err := url.Parse("https://example.com/a?b=c")
	if err != nil {
		t.Fatalf("url.Parse() = %v", err)
	}
	v := library.URLValue{URL: u}

	t.Run("ConvertToNative", func(t *testing.T) {
		t.Parallel()
		if got, err := v.ConvertToNative(reflect.TypeFor[*url.URL]()); err != nil || got != u {
			t.Errorf("ConvertToNative(*url.URL) = %v, %v, want %v", got, err, u)
		}
		if got, err := v.ConvertToNative(reflect.TypeFor[string]()); err != nil || got != "https://example.com/a?b=c" {
			t.Errorf("ConvertToNative(string) = %v, %v, want https://example.com/a?b=c", got, err)
		}
		_, err := v.ConvertToNative(reflect.TypeFor[int]())
		if want := "type conversion error from 'URL' to 'int'"; err == nil || err.Error() != want {
			t.Errorf("ConvertToNative(int) error = %v, want %q", err, want)
		}
	})

	t.Run("ConvertToType", func(t *testing.T) {
		t.Parallel()
		if got := v.ConvertToType(library.URLType); got != v {
			t.Errorf("ConvertToType(URLType) = %v, want %v", got, v)
		}
		if got := v.ConvertToType(types.TypeType); got != library.URLType {
			t.Errorf("ConvertToType(TypeType) = %v, want %v", got, library.URLType)
		}
		got := v.ConvertToType(types.StringType)
		if err, ok := got.(*types.Err); !ok || err.Error() != "type conversion error from 'kubernetes.URL' to 'string'" {
			t.Errorf("ConvertToType(StringType) = %v, want type conversion error", got)
		}
	})

	t.Run("Equal", func(t *testing.T) {
		t.Parallel()
		same, err := url.Parse("https://example.com/a?b=c")
		if err != nil {
			t.Fatalf("url.Parse() = %v", err)
		}
		if got := v.Equal(library.URLValue{URL: same}); got != types.True {
			t.Errorf("Equal(same) = %v, want true", got)
		}
		if got := v.Equal(library.URLValue{}); got != types.False {
			t.Errorf("Equal(zero) = %v, want false", got)
		}
		if got := (library.URLValue{}).Equal(library.URLValue{}); got != types.True {
			t.Errorf("zero Equal(zero) = %v, want true", got)
		}
		if got := v.Equal(types.String("https://example.com/a?b=c")); !types.IsError(got) {
			t.Errorf("Equal(string) = %v, want an error value", got)
		}
	})

	t.Run("TypeAndValue", func(t *testing.T) {
		t.Parallel()
		if got := v.Type(); got.TypeName() != "kubernetes.URL" {
			t.Errorf("Type() = %v, want kubernetes.URL", got)
		}
		if got := v.Value(); got != u {
			t.Errorf("Value() = %v, want %v", got, u)
		}
	})
}

// FuzzURL checks that the URL functions never panic and that url succeeds
// exactly when both net/url parsers accept the string, while isURL only
// asks url.ParseRequestURI (so isURL('// ') is true but url('// ') fails).
func FuzzURL(f *testing.F) {
	for _, s := range []string{
		"", "/", "/a b", "https://user:pass@example.com:80/path?query=val#fragment", "https://a:b:c/",
		"../rel", "http://[::1]:80/", "http://[::1", "https://x/?a=%zz&b=1;c", "mailto:a@b", "*", "//host/path", "// ",
	} {
		f.Add(s)
	}
	env := newEnv(f, library.URLs(), cel.Variable("s", cel.StringType))
	parse := mustProgram(f, env, "url(s)")
	valid := mustProgram(f, env, "isURL(s)")
	parts := mustProgram(f, env, "[url(s).getScheme(), url(s).getHost(), url(s).getHostname(), url(s).getPort(),"+
		" url(s).getEscapedPath()].size() == 5 && url(s).getQuery().all(k, url(s).getQuery()[k].size() > 0)")
	f.Fuzz(func(t *testing.T, s string) {
		in := map[string]any{"s": s}
		_, reqErr := url.ParseRequestURI(s)
		_, parseErr := url.Parse(s)
		wantOK := reqErr == nil && parseErr == nil
		got, _, err := parse.Eval(in)
		if ok := err == nil; ok != wantOK {
			t.Fatalf("url(%q) = %v, %v; want success %v", s, got, err, wantOK)
		}
		if isURL, _, err := valid.Eval(in); err != nil || isURL != types.Bool(reqErr == nil) {
			t.Fatalf("isURL(%q) = %v, %v, want %v", s, isURL, err, reqErr == nil)
		}
		if !wantOK {
			return
		}
		if ok, _, err := parts.Eval(in); err != nil || ok != types.True {
			t.Fatalf("components of url(%q) = %v, %v, want true", s, ok, err)
		}
	})
}

func ExampleURLs() {
	env, err := cel.NewEnv(library.URLs())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, expr := range []string{
		"url('https://[::1]:8443/a%20b?x=1&x=2').getHostname()",
		"url('https://[::1]:8443/a%20b?x=1&x=2').getPort()",
		"url('https://[::1]:8443/a%20b?x=1&x=2').getEscapedPath()",
		"url('https://[::1]:8443/a%20b?x=1&x=2').getQuery()['x']",
		"isURL('../relative')",
	} {
		out, err := evalExpr(env, expr)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(out.Value())
	}
	// Output:
	// ::1
	// 8443
	// /a%20b
	// [1 2]
	// false
}
