package library_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"github.com/vapkit/vapkit/celenv/internal/library"
)

// Validation messages, byte for byte as apimachinery and apiserver produce
// them (apiserver pkg/cel/library/format_test.go).
const (
	msgDNS1123Label     = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
	msgDNS1123Subdomain = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	msgDNS1035Label     = `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`
	msgQualifiedName    = `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`
	msgLabelValue       = `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`
)

// formatNames are the CEL names of all formats.
var formatNames = []string{
	"dns1123Label", "dns1123Subdomain", "dns1035Label", "qualifiedName",
	"dns1123LabelPrefix", "dns1123SubdomainPrefix", "dns1035LabelPrefix",
	"labelValue", "uri", "uuid", "byte", "date", "datetime",
}

// problems renders the assertion that validating with expr reported exactly
// msgs: expr.value() compared with a list of triple-quoted raw strings.
func problems(expr string, msgs ...string) string {
	quoted := make([]string, len(msgs))
	for i, m := range msgs {
		quoted[i] = "r'''" + m + "'''"
	}
	return expr + `.value() == [` + strings.Join(quoted, ", ") + `]`
}

func TestFormat(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 64)
	cases := []exprCase{
		// valid inputs give optional.none()
		{name: "dns1123Label ok", expr: `!format.dns1123Label().validate("my-label-name").hasValue()`},
		{name: "dns1123Subdomain ok", expr: `!format.dns1123Subdomain().validate("apiextensions.k8s.io").hasValue()`},
		{name: "dns1035Label ok", expr: `!format.dns1035Label().validate("my-label-name").hasValue()`},
		{name: "qualifiedName ok", expr: `!format.qualifiedName().validate("apiextensions.k8s.io/v1beta1").hasValue()`},
		{name: "qualifiedName simple ok", expr: `!format.qualifiedName().validate("my.name").hasValue()`},
		{name: "dns1123LabelPrefix ok", expr: `!format.dns1123LabelPrefix().validate("my-label-prefix-").hasValue()`},
		{name: "dns1123SubdomainPrefix ok", expr: `!format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-").hasValue()`},
		{name: "dns1035LabelPrefix ok", expr: `!format.dns1035LabelPrefix().validate("my-label-prefix-").hasValue()`},
		{name: "labelValue ok", expr: `!format.labelValue().validate("my-cool-label-Value").hasValue()`},
		{name: "labelValue empty ok", expr: `!format.labelValue().validate("").hasValue()`},
		{name: "uri ok", expr: `!format.uri().validate("http://example.com").hasValue()`},
		{name: "uri absolute path ok", expr: `!format.uri().validate("/just/a/path").hasValue()`},
		{name: "uuid ok", expr: `!format.uuid().validate("123e4567-e89b-12d3-a456-426614174000").hasValue()`},
		{name: "uuid upper no dashes ok", expr: `!format.uuid().validate("123E4567E89B12D3A456426614174000").hasValue()`},
		{name: "byte ok", expr: `!format.byte().validate("aGVsbG8=").hasValue()`},
		{name: "date ok", expr: `!format.date().validate("2021-01-01").hasValue()`},
		{name: "datetime ok", expr: `!format.datetime().validate("2021-01-01T00:00:00Z").hasValue()`},
		{name: "validate equals none", expr: `format.dns1123Label().validate("ok") == optional.none()`},

		// invalid inputs give the messages
		{name: "dns1123Label bad", expr: problems(`format.dns1123Label().validate("contains a space")`, msgDNS1123Label)},
		{name: "dns1123Label too long", expr: problems(`format.dns1123Label().validate("`+long+`")`, "must be no more than 63 characters")},
		{name: "dns1123Label upper", expr: problems(`format.dns1123Label().validate("A")`, msgDNS1123Label)},
		{name: "dns1123Subdomain bad", expr: problems(`format.dns1123Subdomain().validate("contains a space")`, msgDNS1123Subdomain)},
		{name: "dns1035Label bad", expr: problems(`format.dns1035Label().validate("contains a space")`, msgDNS1035Label)},
		{name: "dns1035Label digit first", expr: problems(`format.dns1035Label().validate("1abc")`, msgDNS1035Label)},
		{name: "qualifiedName bad", expr: problems(`format.qualifiedName().validate("contains a space")`, msgQualifiedName)},
		{name: "qualifiedName empty", expr: problems(`format.qualifiedName().validate("")`, "name part must be non-empty", msgQualifiedName)},
		{name: "dns1123LabelPrefix bad", expr: problems(`format.dns1123LabelPrefix().validate("contains a space-")`, msgDNS1123Label)},
		{name: "dns1123SubdomainPrefix bad", expr: problems(`format.dns1123SubdomainPrefix().validate("contains a space-")`, msgDNS1123Subdomain)},
		{name: "dns1035LabelPrefix bad", expr: problems(`format.dns1035LabelPrefix().validate("contains a space-")`, msgDNS1035Label)},
		{name: "dns1123Label trailing dash", expr: problems(`format.dns1123Label().validate("abc-")`, msgDNS1123Label)},
		{name: "labelValue bad", expr: problems(`format.labelValue().validate("my-cool-label-Value!!\n\n!!!")`, msgLabelValue)},
		{name: "uri bad", expr: problems(`format.uri().validate("not a uri")`, `parse "not a uri": invalid URI for request`)},
		{name: "uri relative", expr: problems(`format.uri().validate("example.com")`, `parse "example.com": invalid URI for request`)},
		{name: "uuid bad", expr: problems(`format.uuid().validate("123e4567")`, "does not match the UUID format")},
		{name: "byte bad", expr: problems(`format.byte().validate("aGVsbG8")`, "invalid base64")},
		{name: "date bad", expr: problems(`format.date().validate("2020-01-32")`, "invalid date")},
		{name: "datetime bad", expr: problems(`format.datetime().validate("2020-01-32T00:00:00Z")`, "invalid datetime")},

		// The prefix formats replace the last two characters of a name that
		// ends in '-' with "a", as apimachinery does: "a.-" is checked as "aa".
		{name: "prefix masks two characters", expr: `!format.dns1123LabelPrefix().validate("a.-").hasValue()`},
		{name: "prefix single dash", expr: problems(`format.dns1123LabelPrefix().validate("-")`, msgDNS1123Label)},
		{name: "prefix two characters", expr: `!format.dns1035LabelPrefix().validate("a-").hasValue()`},

		// format.named
		{name: "named unknown", expr: `!format.named("unknown").hasValue()`},
		{name: "named unknown is none", expr: `format.named("unknown") == optional.none()`},
		{name: "named is case sensitive", expr: `!format.named("DNS1123Label").hasValue()`},
		{name: "named validate", expr: problems(`format.named("dns1123Label").value().validate("A")`, msgDNS1123Label)},
		{name: "named optional chain", expr: `!format.named("uuid").value().validate("123e4567-e89b-12d3-a456-426614174000").hasValue()`},
		{name: "named needs string", expr: `format.named(1)`, compileErr: "found no matching overload for 'format.named'"},
		{name: "validate needs format", expr: `"x".validate("y")`, compileErr: "found no matching overload for 'validate'"},
		{name: "unknown constructor", expr: `format.email()`, compileErr: "undeclared reference to 'email'"},
	}
	for _, lhs := range formatNames {
		cases = append(cases,
			exprCase{name: "named " + lhs, expr: fmt.Sprintf(`format.named(%q).hasValue()`, lhs)},
			exprCase{name: "named equals constructor " + lhs, expr: fmt.Sprintf(`format.named(%q).value() == format.%s()`, lhs, lhs)},
		)
		for _, rhs := range formatNames {
			if lhs != rhs {
				cases = append(cases, exprCase{
					name: fmt.Sprintf("compare %s %s", lhs, rhs),
					expr: fmt.Sprintf(`format.%s() != format.%s()`, lhs, rhs),
				})
			}
		}
	}
	runExprCases(t, allLibsEnv(t), cases)
}

// TestFormatValue pins the names and regex size estimates that cost
// estimation relies on (apiserver pkg/cel/library/format.go ConstantFormats).
func TestFormatValue(t *testing.T) {
	t.Parallel()
	want := map[string]struct {
		name string
		size int
	}{
		"dns1123Label":           {"DNS1123Label", 30},
		"dns1123Subdomain":       {"DNS1123Subdomain", 60},
		"dns1035Label":           {"DNS1035Label", 30},
		"qualifiedName":          {"QualifiedName", 60},
		"dns1123LabelPrefix":     {"DNS1123LabelPrefix", 30},
		"dns1123SubdomainPrefix": {"DNS1123SubdomainPrefix", 60},
		"dns1035LabelPrefix":     {"DNS1035LabelPrefix", 30},
		"labelValue":             {"LabelValue", 40},
		"uri":                    {"URI", 1103},
		"uuid":                   {"uuid", 70},
		"byte":                   {"byte", 84},
		"date":                   {"date", 71},
		"datetime":               {"datetime", 71},
	}
	env := allLibsEnv(t)
	for _, n := range formatNames {
		t.Run(n, func(t *testing.T) {
			t.Parallel()
			ast, iss := env.Compile("format." + n + "()")
			if iss.Err() != nil {
				t.Fatalf("Compile() = %v", iss.Err())
			}
			prg, err := env.Program(ast)
			if err != nil {
				t.Fatalf("Program() = %v", err)
			}
			out, _, err := prg.Eval(cel.NoVars())
			if err != nil {
				t.Fatalf("Eval() = %v", err)
			}
			f, ok := out.Value().(library.FormatValue)
			if !ok {
				t.Fatalf("Eval().Value() = %T, want library.FormatValue", out.Value())
			}
			if f.Name != want[n].name || f.MaxRegexSize != want[n].size {
				t.Errorf("format.%s() = {Name: %q, MaxRegexSize: %d}, want {%q, %d}", n, f.Name, f.MaxRegexSize, want[n].name, want[n].size)
			}
			if got := f.Type().TypeName(); got != "kubernetes.NamedFormat" {
				t.Errorf("Type().TypeName() = %q, want kubernetes.NamedFormat", got)
			}
			if got := f.ConvertToType(types.TypeType); got != library.FormatType {
				t.Errorf("ConvertToType(TypeType) = %v, want %v", got, library.FormatType)
			}
			if got := f.ConvertToType(types.StringType); !types.IsError(got) {
				t.Errorf("ConvertToType(StringType) = %v, want an error", got)
			}
			if _, err := f.ConvertToNative(reflect.TypeFor[string]()); err == nil {
				t.Errorf("ConvertToNative(string) succeeded, want an error")
			}
			if got := f.Equal(types.String(f.Name)); !types.IsError(got) {
				t.Errorf("Equal(string) = %v, want an error", got)
			}
		})
	}
	if got := (library.FormatValue{}).Validate("anything"); got != nil {
		t.Errorf("FormatValue{}.Validate() = %v, want nil", got)
	}
}

func ExampleFormat() {
	env, err := cel.NewEnv(cel.OptionalTypes(), library.Format())
	if err != nil {
		fmt.Println(err)
		return
	}
	printEvals(env,
		`format.dns1123Label().validate("my-name").hasValue()`,
		`format.named("uuid").value().validate("1234").value()`,
		`format.named("email").hasValue()`,
	)
	// Output:
	// format.dns1123Label().validate("my-name").hasValue(): false
	// format.named("uuid").value().validate("1234").value(): [does not match the UUID format]
	// format.named("email").hasValue(): false
}
