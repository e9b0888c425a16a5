package library

import (
	"fmt"
	"net/url"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
)

// FormatType is the CEL type of [FormatValue]. Its name is
// kubernetes.NamedFormat, as in apiserver pkg/cel/format.go.
var FormatType = cel.ObjectType("kubernetes.NamedFormat")

// FormatValue is the CEL value of a named string format, as returned by
// format.dns1123Label() or format.named("uri").
//
// Two formats are equal when their names are equal.
type FormatValue struct {
	// Name identifies the format, e.g. "DNS1123Label" or "uuid" (apiserver's
	// names, which differ from the CEL function names).
	Name string
	// MaxRegexSize is the length of the regular expression, or of an
	// equivalent one, that validation amounts to; cost estimation uses it.
	MaxRegexSize int

	validate func(string) []string
}

// Validate returns the problems with s under format f, or nil if s is valid.
// A FormatValue not obtained from this package accepts everything.
func (f FormatValue) Validate(s string) []string {
	if f.validate == nil {
		return nil
	}
	return f.validate(s)
}

// ConvertToNative implements [ref.Val]; formats have no native form.
func (f FormatValue) ConvertToNative(typeDesc reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion error from 'Format' to '%v'", typeDesc)
}

// ConvertToType implements [ref.Val]. Only the identity conversion and
// type() are supported.
func (f FormatValue) ConvertToType(typeVal ref.Type) ref.Val {
	switch {
	case typeVal == nil:
		return types.NewErr("type conversion error from '%s' to '<nil>'", FormatType)
	case typeVal == types.TypeType:
		return FormatType
	case typeVal.TypeName() == FormatType.TypeName():
		return f
	default:
		return types.NewErr("type conversion error from '%s' to '%s'", FormatType, typeVal)
	}
}

// Equal implements [ref.Val] and compares names.
func (f FormatValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(FormatValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(f.Name == o.Name)
}

// Type implements [ref.Val] and returns [FormatType].
func (f FormatValue) Type() ref.Type {
	return FormatType
}

// Value implements [ref.Val] and returns f itself, as apiserver does; cost
// estimation reads MaxRegexSize from it.
func (f FormatValue) Value() any {
	return f
}

// Regex size estimates that apiserver pkg/cel/library/format.go uses for the
// formats that are not checked with a regular expression of their own:
// govalidator's base64 and URL patterns.
const (
	base64RegexSize = 84
	urlRegexSize    = 1103
)

// formatNames lists the CEL names of all formats in sorted order, so that
// declarations are made in a fixed order.
var formatNames = [...]string{
	"byte",
	"date",
	"datetime",
	"dns1035Label",
	"dns1035LabelPrefix",
	"dns1123Label",
	"dns1123LabelPrefix",
	"dns1123Subdomain",
	"dns1123SubdomainPrefix",
	"labelValue",
	"qualifiedName",
	"uri",
	"uuid",
}

// lookupFormat returns the format with the given CEL name (as used in
// format.<name>() and format.named), mirroring apiserver's ConstantFormats.
// A fresh value is built on every call, so there is no shared mutable state.
func lookupFormat(name string) (FormatValue, bool) {
	switch name {
	case "dns1123Label":
		return FormatValue{Name: "DNS1123Label", MaxRegexSize: 30, validate: func(s string) []string { return apimachineryvalidation.NameIsDNSLabel(s, false) }}, true
	case "dns1123Subdomain":
		return FormatValue{Name: "DNS1123Subdomain", MaxRegexSize: 60, validate: func(s string) []string { return apimachineryvalidation.NameIsDNSSubdomain(s, false) }}, true
	case "dns1035Label":
		return FormatValue{Name: "DNS1035Label", MaxRegexSize: 30, validate: func(s string) []string { return apimachineryvalidation.NameIsDNS1035Label(s, false) }}, true
	case "qualifiedName":
		return FormatValue{Name: "QualifiedName", MaxRegexSize: 60, validate: validation.IsQualifiedName}, true
	case "dns1123LabelPrefix":
		return FormatValue{Name: "DNS1123LabelPrefix", MaxRegexSize: 30, validate: func(s string) []string { return apimachineryvalidation.NameIsDNSLabel(s, true) }}, true
	case "dns1123SubdomainPrefix":
		return FormatValue{Name: "DNS1123SubdomainPrefix", MaxRegexSize: 60, validate: func(s string) []string { return apimachineryvalidation.NameIsDNSSubdomain(s, true) }}, true
	case "dns1035LabelPrefix":
		return FormatValue{Name: "DNS1035LabelPrefix", MaxRegexSize: 30, validate: func(s string) []string { return apimachineryvalidation.NameIsDNS1035Label(s, true) }}, true
	case "labelValue":
		return FormatValue{Name: "LabelValue", MaxRegexSize: 40, validate: validation.IsValidLabelValue}, true
	case "uri":
		return FormatValue{Name: "URI", MaxRegexSize: urlRegexSize, validate: validateURI}, true
	case "uuid":
		return FormatValue{Name: "uuid", MaxRegexSize: len(strfmt.UUIDPattern), validate: strfmtCheck("uuid", "does not match the UUID format")}, true
	case "byte":
		return FormatValue{Name: "byte", MaxRegexSize: base64RegexSize, validate: strfmtCheck("byte", "invalid base64")}, true
	case "date":
		// apiserver estimates a date with the longer date-time pattern.
		return FormatValue{Name: "date", MaxRegexSize: len(strfmt.DateTimePattern), validate: strfmtCheck("date", "invalid date")}, true
	case "datetime":
		return FormatValue{Name: "datetime", MaxRegexSize: len(strfmt.DateTimePattern), validate: strfmtCheck("datetime", "invalid datetime")}, true
	}
	return FormatValue{}, false
}

// validateURI reports url.ParseRequestURI's error, which is more helpful
// than a generic message.
func validateURI(s string) []string {
	if _, err := url.ParseRequestURI(s); err != nil {
		return []string{err.Error()}
	}
	return nil
}

// strfmtCheck returns a validator for an OpenAPI string format from
// kube-openapi's default registry, reporting msg on failure.
func strfmtCheck(name, msg string) func(string) []string {
	return func(s string) []string {
		if !strfmt.Default.Validates(name, s) {
			return []string{msg}
		}
		return nil
	}
}

// Format returns the Kubernetes format library, as apiserver
// pkg/cel/library Format:
//
//	format.named(string) optional(kubernetes.NamedFormat)   // optional.none() for unknown names
//	format.<name>() kubernetes.NamedFormat
//	<NamedFormat>.validate(string) optional(list(string))   // optional.none() when valid
//
// where <name> is one of dns1123Label, dns1123Subdomain, dns1035Label,
// qualifiedName, dns1123LabelPrefix, dns1123SubdomainPrefix,
// dns1035LabelPrefix, labelValue, uri, uuid, byte, date or datetime. The
// validation messages are apimachinery's (pkg/util/validation) for the name
// formats; uri reports the url.ParseRequestURI error, and uuid, byte, date
// and datetime report "does not match the UUID format", "invalid base64",
// "invalid date" and "invalid datetime".
//
// Using the optional results needs [cel.OptionalTypes] in the environment.
func Format() cel.EnvOption {
	return cel.Lib(formatLib{})
}

// formatLib is the [cel.SingletonLibrary] behind [Format].
type formatLib struct{}

// LibraryName returns the name apiserver registers the library under.
func (formatLib) LibraryName() string { return "kubernetes.format" }

// Types returns the CEL types the library introduces.
func (formatLib) Types() []*cel.Type { return []*cel.Type{FormatType} }

// CompileOptions declares validate, format.named and one zero-argument
// constructor per format, each with apiserver's overload ID.
func (formatLib) CompileOptions() []cel.EnvOption {
	opts := []cel.EnvOption{
		cel.Function("validate",
			cel.MemberOverload("format-validate", []*cel.Type{FormatType, cel.StringType},
				cel.OptionalType(cel.ListType(cel.StringType)), cel.BinaryBinding(formatValidate))),
		cel.Function("format.named",
			cel.Overload("format-named", []*cel.Type{cel.StringType},
				cel.OptionalType(FormatType), cel.UnaryBinding(formatNamed))),
	}
	for _, name := range formatNames {
		f, _ := lookupFormat(name)
		fn := "format." + name
		opts = append(opts, cel.Function(fn,
			cel.Overload(fn, []*cel.Type{}, FormatType,
				cel.FunctionBinding(func(...ref.Val) ref.Val { return f }))))
	}
	return opts
}

// ProgramOptions implements [cel.Library]; the library has none.
func (formatLib) ProgramOptions() []cel.ProgramOption { return nil }

func formatNamed(arg ref.Val) ref.Val {
	name, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	f, ok := lookupFormat(name)
	if !ok {
		return types.OptionalNone
	}
	return types.OptionalOf(f)
}

func formatValidate(fv, str ref.Val) ref.Val {
	f, ok := fv.(FormatValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(fv)
	}
	s, ok := str.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(str)
	}
	problems := f.Validate(s)
	if len(problems) == 0 {
		return types.OptionalNone
	}
	return types.OptionalOf(types.NewStringList(types.DefaultTypeAdapter, problems))
}
