package library

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// SemverType is the CEL type of [SemverValue], named kubernetes.Semver as in
// apiserver pkg/cel/semver.go.
var SemverType = cel.ObjectType("kubernetes.Semver")

// SemverValue is the CEL value of a semantic version (https://semver.org).
// It is a github.com/blang/semver/v4 Version, the package apiserver's
// kubernetes.Semver wraps (pkg/cel/semver.go), so parsing, printing and
// ordering are upstream's by construction. The zero value is version
// 0.0.0.
//
// Equality and ordering ignore build metadata, so
// `semver("1.0.0+a") == semver("1.0.0+b")` is true.
type SemverValue struct {
	semver.Version
}

// Compare returns -1, 0 or 1 as v is lower than, equal to or higher than o
// in semver precedence (blang/semver's Version.Compare).
func (v SemverValue) Compare(o SemverValue) int {
	return v.Version.Compare(o.Version)
}

// ConvertToNative implements [ref.Val]. It supports SemverValue,
// semver.Version (as apiserver) and string.
func (v SemverValue) ConvertToNative(typeDesc reflect.Type) (any, error) {
	if reflect.TypeOf(v).AssignableTo(typeDesc) {
		return v, nil
	}
	if reflect.TypeOf(v.Version).AssignableTo(typeDesc) {
		return v.Version, nil
	}
	if reflect.TypeOf("").AssignableTo(typeDesc) {
		return v.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'Semver' to '%v'", typeDesc)
}

// ConvertToType implements [ref.Val]. Only the identity conversion and
// type() are supported.
func (v SemverValue) ConvertToType(typeVal ref.Type) ref.Val {
	switch {
	case typeVal == nil:
		return types.NewErr("type conversion error from '%s' to '<nil>'", SemverType)
	case typeVal == types.TypeType:
		return SemverType
	case typeVal.TypeName() == SemverType.TypeName():
		return v
	default:
		return types.NewErr("type conversion error from '%s' to '%s'", SemverType, typeVal)
	}
}

// Equal implements [ref.Val]: versions are equal when they have the same
// precedence, which ignores build metadata.
func (v SemverValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(SemverValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(v.Compare(o) == 0)
}

// Type implements [ref.Val] and returns [SemverType].
func (v SemverValue) Type() ref.Type {
	return SemverType
}

// Value implements [ref.Val] and returns v itself.
func (v SemverValue) Value() any {
	return v
}

// parseSemver parses s strictly: blang/semver/v4 Parse, as apiserver's
// semver(string) and isSemver(string).
func parseSemver(s string) (SemverValue, error) {
	v, err := semver.Parse(s)
	if err != nil {
		return SemverValue{}, err
	}
	return SemverValue{v}, nil
}

// parseSemverNormalized is the lenient parse of semver(s, true), as
// apiserver's normalizeAndParse: it drops one leading "v", strips leading
// zeros from the first three dot-separated parts, pads a missing minor or
// patch with 0 and then parses strictly with blang/semver. Unlike blang's
// ParseTolerant it does not trim white space, and its error text is
// lower-case. This normalization is apiserver's own code
// (pkg/cel/library/semverlib.go normalizeAndParse), not blang's, so it is
// re-implemented here.
func parseSemverNormalized(s string) (SemverValue, error) {
	s = strings.TrimPrefix(s, "v")
	parts := strings.SplitN(s, ".", 3)
	for i, p := range parts {
		if len(p) < 2 {
			continue
		}
		p = strings.TrimLeft(p, "0")
		if p == "" || p[0] < '0' || p[0] > '9' {
			p = "0" + p
		}
		parts[i] = p
	}
	if len(parts) < 3 {
		if strings.ContainsAny(parts[len(parts)-1], "+-") {
			return SemverValue{}, errors.New("short version cannot contain PreRelease/Build meta data")
		}
		for len(parts) < 3 {
			parts = append(parts, "0")
		}
	}
	return parseSemver(strings.Join(parts, "."))
}

// Semver returns the Kubernetes semver library at the given version, as
// apiserver pkg/cel/library SemverLib(SemverVersion(version)). Kubernetes
// 1.33 and later use version 1.
//
// Version 0:
//
//	semver(string) kubernetes.Semver        // strict semver 2.0.0; the parse error on failure
//	isSemver(string) bool
//	<Semver>.isGreaterThan(<Semver>) bool
//	<Semver>.isLessThan(<Semver>) bool
//	<Semver>.compareTo(<Semver>) int         // -1, 0 or 1
//	<Semver>.major() int
//	<Semver>.minor() int
//	<Semver>.patch() int
//
// Version 1 adds semver(string, bool) and isSemver(string, bool); when the
// bool is true the input is normalized first (see [SemverValue] and
// semver('v01.2', true) == semver('1.2.0')).
//
// The library is a singleton named kubernetes.Semver: only the first
// Semver option applied to an environment takes effect.
func Semver(version uint32) cel.EnvOption {
	return cel.Lib(semverLib{version: version})
}

// semverLib is the [cel.SingletonLibrary] behind [Semver].
type semverLib struct {
	version uint32
}

// LibraryName returns the name apiserver registers the library under.
func (semverLib) LibraryName() string { return "kubernetes.Semver" }

// Types returns the CEL types the library introduces.
func (semverLib) Types() []*cel.Type { return []*cel.Type{SemverType} }

// CompileOptions declares the functions with apiserver's overload IDs.
func (l semverLib) CompileOptions() []cel.EnvOption {
	v, s, b, i := SemverType, cel.StringType, cel.BoolType, cel.IntType
	vv := []*cel.Type{v, v}
	semverFn := []cel.FunctionOpt{
		cel.Overload("string_to_semver", []*cel.Type{s}, v, cel.UnaryBinding(func(a ref.Val) ref.Val { return stringToSemver(a, types.False) })),
	}
	isSemverFn := []cel.FunctionOpt{
		cel.Overload("is_semver_string", []*cel.Type{s}, b, cel.UnaryBinding(func(a ref.Val) ref.Val { return isSemver(a, types.False) })),
	}
	if l.version >= 1 {
		semverFn = append(semverFn,
			cel.Overload("string_bool_to_semver", []*cel.Type{s, b}, v, cel.BinaryBinding(stringToSemver)))
		isSemverFn = append(isSemverFn,
			cel.Overload("is_semver_string_bool", []*cel.Type{s, b}, b, cel.BinaryBinding(isSemver)))
	}
	return []cel.EnvOption{
		cel.Function("semver", semverFn...),
		cel.Function("isSemver", isSemverFn...),
		cel.Function("isGreaterThan",
			cel.MemberOverload("semver_is_greater_than", vv, b, cel.BinaryBinding(semverCompare(func(c int) ref.Val { return types.Bool(c == 1) })))),
		cel.Function("isLessThan",
			cel.MemberOverload("semver_is_less_than", vv, b, cel.BinaryBinding(semverCompare(func(c int) ref.Val { return types.Bool(c == -1) })))),
		cel.Function("compareTo",
			cel.MemberOverload("semver_compare_to", vv, i, cel.BinaryBinding(semverCompare(func(c int) ref.Val { return types.Int(c) })))),
		cel.Function("major",
			cel.MemberOverload("semver_major", []*cel.Type{v}, i, cel.UnaryBinding(semverPart(func(x SemverValue) uint64 { return x.Major })))),
		cel.Function("minor",
			cel.MemberOverload("semver_minor", []*cel.Type{v}, i, cel.UnaryBinding(semverPart(func(x SemverValue) uint64 { return x.Minor })))),
		cel.Function("patch",
			cel.MemberOverload("semver_patch", []*cel.Type{v}, i, cel.UnaryBinding(semverPart(func(x SemverValue) uint64 { return x.Patch })))),
	}
}

// ProgramOptions implements [cel.Library]; the library has none.
func (semverLib) ProgramOptions() []cel.ProgramOption { return nil }

// semverArgs extracts the arguments of semver and isSemver; bad is non-nil
// when they have unexpected types.
func semverArgs(str, normalize ref.Val) (s string, n bool, bad ref.Val) {
	s, ok := str.Value().(string)
	if !ok {
		return "", false, types.MaybeNoSuchOverloadErr(str)
	}
	n, ok = normalize.Value().(bool)
	if !ok {
		return "", false, types.MaybeNoSuchOverloadErr(normalize)
	}
	return s, n, nil
}

// parseSemverMode parses s strictly or, when normalize is true, leniently.
func parseSemverMode(s string, normalize bool) (SemverValue, error) {
	if normalize {
		return parseSemverNormalized(s)
	}
	return parseSemver(s)
}

func stringToSemver(str, normalize ref.Val) ref.Val {
	s, n, bad := semverArgs(str, normalize)
	if bad != nil {
		return bad
	}
	v, err := parseSemverMode(s, n)
	if err != nil {
		return types.WrapErr(err)
	}
	return v
}

func isSemver(str, normalize ref.Val) ref.Val {
	s, n, bad := semverArgs(str, normalize)
	if bad != nil {
		return bad
	}
	_, err := parseSemverMode(s, n)
	return types.Bool(err == nil)
}

// semverCompare returns a binding comparing two versions and mapping the
// result with conv.
func semverCompare(conv func(int) ref.Val) func(lhs, rhs ref.Val) ref.Val {
	return func(lhs, rhs ref.Val) ref.Val {
		a, ok := lhs.(SemverValue)
		if !ok {
			return types.MaybeNoSuchOverloadErr(lhs)
		}
		b, ok := rhs.(SemverValue)
		if !ok {
			return types.MaybeNoSuchOverloadErr(rhs)
		}
		return conv(a.Compare(b))
	}
}

// semverPart returns a binding for major, minor or patch. Like apiserver, a
// number above math.MaxInt64 wraps around when converted to a CEL int.
func semverPart(get func(SemverValue) uint64) func(ref.Val) ref.Val {
	return func(arg ref.Val) ref.Val {
		v, ok := arg.(SemverValue)
		if !ok {
			return types.MaybeNoSuchOverloadErr(arg)
		}
		return types.Int(int64(get(v)))
	}
}
