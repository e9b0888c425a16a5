package library

import (
	"fmt"
	"net/url"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// URLType is the CEL type of [URLValue] values, the object type named
// "kubernetes.URL" as in apiserver `pkg/cel/url.go`. Unlike net.IP and
// net.CIDR, the name is not registered as an identifier, so expressions
// cannot spell it; `type(url('/'))` still evaluates to it.
var URLType = cel.ObjectType("kubernetes.URL")

// URLValue is the CEL value of a parsed URL, as produced by `url(string)`.
// Two URLValues are equal when their [url.URL.String] forms are equal.
// The library never produces a URL holding a nil *url.URL; the CEL methods
// below treat one as the empty URL, but the promoted *url.URL methods do not.
type URLValue struct {
	*url.URL
}

// text returns the URL's string form, "" for a nil *url.URL.
func (d URLValue) text() string {
	if d.URL == nil {
		return ""
	}
	return d.URL.String()
}

// Compile-time check: URLValue is a CEL value.
var _ ref.Val = URLValue{}

// ConvertToNative converts the URL to a *[url.URL] or to its string form,
// as apiserver does.
func (d URLValue) ConvertToNative(typeDesc reflect.Type) (any, error) {
	if reflect.TypeFor[*url.URL]().AssignableTo(typeDesc) {
		return d.URL, nil
	}
	if reflect.TypeFor[string]().AssignableTo(typeDesc) {
		return d.text(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'URL' to '%v'", typeDesc)
}

// ConvertToType converts the URL to itself or to its type. Unlike IP and
// CIDR there is no string conversion, matching apiserver.
func (d URLValue) ConvertToType(typeVal ref.Type) ref.Val {
	switch {
	case typeVal == types.TypeType:
		return URLType
	case typeVal.TypeName() == URLType.TypeName():
		return d
	}
	return types.NewErr("type conversion error from '%s' to '%s'", URLType, typeVal)
}

// Equal reports whether other is a URL with the same string form. Comparing
// with a value of another type gives a "no such overload" error value.
func (d URLValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(URLValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(d.text() == o.text())
}

// Type returns [URLType].
func (d URLValue) Type() ref.Type {
	return URLType
}

// Value returns the embedded *[url.URL].
func (d URLValue) Value() any {
	return d.URL
}

// URLs returns the Kubernetes URL library, apiserver's "kubernetes.urls"
// (available since Kubernetes 1.0 of the CEL environment). It declares:
//
//	url(string) kubernetes.URL     // absolute URI or absolute path, else an error
//	isURL(string) bool             // whether url.ParseRequestURI accepts s
//	<URL>.getScheme() string
//	<URL>.getHost() string         // host[:port], IPv6 in brackets
//	<URL>.getHostname() string     // host without port and without brackets
//	<URL>.getPort() string
//	<URL>.getEscapedPath() string
//	<URL>.getQuery() map(string, list(string))
//
// Missing components give "" (or an empty map). Examples:
//
//	url('https://[::1]:80/p').getHostname() == '::1'
//	url('https://x/?a=1&a=2').getQuery()['a'] == ['1', '2']
//	url('../rel') // error: URL parse error during conversion from string: parse "../rel": invalid URI for request
func URLs() cel.EnvOption {
	return cel.Lib(urlsLib{})
}

// urlsLib is the cel.SingletonLibrary behind [URLs].
type urlsLib struct{}

// LibraryName returns apiserver's name for the library.
func (urlsLib) LibraryName() string { return "kubernetes.urls" }

// CompileOptions declares the functions. URLType is deliberately not
// registered with cel.Types, as in apiserver.
func (urlsLib) CompileOptions() []cel.EnvOption {
	urlArg := []*cel.Type{URLType}
	getter := func(name, id string, get func(*url.URL) string) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload(id, urlArg, cel.StringType,
			cel.UnaryBinding(urlStringGetter(get))))
	}
	return []cel.EnvOption{
		cel.Function("url",
			cel.Overload("string_to_url", []*cel.Type{cel.StringType}, URLType, cel.UnaryBinding(stringToURL))),
		cel.Function("isURL",
			cel.Overload("is_url_string", []*cel.Type{cel.StringType}, cel.BoolType, cel.UnaryBinding(isURL))),
		getter("getScheme", "url_get_scheme", func(u *url.URL) string { return u.Scheme }),
		getter("getHost", "url_get_host", func(u *url.URL) string { return u.Host }),
		getter("getHostname", "url_get_hostname", (*url.URL).Hostname),
		getter("getPort", "url_get_port", (*url.URL).Port),
		getter("getEscapedPath", "url_get_escaped_path", (*url.URL).EscapedPath),
		cel.Function("getQuery",
			cel.MemberOverload("url_get_query", urlArg, cel.MapType(cel.StringType, cel.ListType(cel.StringType)),
				cel.UnaryBinding(urlGetQuery))),
	}
}

// ProgramOptions returns nothing; all bindings are declared with the functions.
func (urlsLib) ProgramOptions() []cel.ProgramOption { return nil }

// stringToURL accepts s only when url.ParseRequestURI does (the rule of the
// OpenAPI "uri" format), but keeps the result of url.Parse, because
// ParseRequestURI folds a "#fragment" into the path or query.
func stringToURL(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	if _, err := url.ParseRequestURI(s); err != nil {
		return types.NewErr("URL parse error during conversion from string: %v", err)
	}
	u, err := url.Parse(s)
	if err != nil {
		return types.NewErr("URL parse error during conversion from string: %v", err)
	}
	return URLValue{URL: u}
}

// isURL is the binding of isURL(string); unlike url() it skips url.Parse.
func isURL(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	_, err := url.ParseRequestURI(s)
	return types.Bool(err == nil)
}

// urlStringGetter adapts a string-valued accessor of *url.URL to a unary CEL
// binding.
func urlStringGetter(get func(*url.URL) string) func(ref.Val) ref.Val {
	return func(arg ref.Val) ref.Val {
		u, ok := arg.Value().(*url.URL)
		if !ok || u == nil {
			return types.MaybeNoSuchOverloadErr(arg)
		}
		return types.String(get(u))
	}
}

// urlGetQuery returns the decoded query as a map from key to all its values
// in order. Iteration order over the map's keys is that of a CEL map built
// from a Go map, as upstream; membership and lookups are unaffected.
func urlGetQuery(arg ref.Val) ref.Val {
	u, ok := arg.Value().(*url.URL)
	if !ok || u == nil {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	query := u.Query()
	result := make(map[ref.Val]ref.Val, len(query))
	for k, v := range query {
		result[types.String(k)] = types.NewStringList(types.DefaultTypeAdapter, v)
	}
	return types.NewRefValMap(types.DefaultTypeAdapter, result)
}
