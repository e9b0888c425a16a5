package library

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// SemverType is the CEL type of [SemverValue], named kubernetes.Semver as in
// apiserver pkg/cel/semver.go.
var SemverType = cel.ObjectType("kubernetes.Semver")

// SemverValue is the CEL value of a semantic version (https://semver.org),
// with the parsing and ordering rules of github.com/blang/semver/v4, which
// apiserver uses. The zero value is version 0.0.0.
//
// Equality and ordering ignore build metadata, so
// `semver("1.0.0+a") == semver("1.0.0+b")` is true.
type SemverValue struct {
	// Major, Minor and Patch are the three version numbers.
	Major, Minor, Patch uint64

	pre   []semverPrerelease // dot-separated identifiers after '-'
	build []string           // dot-separated identifiers after '+'
}

// semverPrerelease is one pre-release identifier: numeric or alphanumeric.
type semverPrerelease struct {
	str   string
	num   uint64
	isNum bool
}

// String returns the version in its canonical text form. For a version that
// was parsed without normalization this is the parsed text itself.
func (v SemverValue) String() string {
	var b strings.Builder
	b.WriteString(strconv.FormatUint(v.Major, 10))
	b.WriteByte('.')
	b.WriteString(strconv.FormatUint(v.Minor, 10))
	b.WriteByte('.')
	b.WriteString(strconv.FormatUint(v.Patch, 10))
	for i, p := range v.pre {
		if i == 0 {
			b.WriteByte('-')
		} else {
			b.WriteByte('.')
		}
		if p.isNum {
			b.WriteString(strconv.FormatUint(p.num, 10))
		} else {
			b.WriteString(p.str)
		}
	}
	for i, s := range v.build {
		if i == 0 {
			b.WriteByte('+')
		} else {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// Compare returns -1, 0 or 1 as v is lower than, equal to or higher than o
// in semver precedence. A version without pre-release identifiers is higher
// than one with; identifiers compare pairwise, numeric below alphanumeric,
// numbers numerically, strings bytewise; a longer identifier list wins a
// tie. Build metadata is ignored.
func (v SemverValue) Compare(o SemverValue) int {
	if c := cmpUint(v.Major, o.Major); c != 0 {
		return c
	}
	if c := cmpUint(v.Minor, o.Minor); c != 0 {
		return c
	}
	if c := cmpUint(v.Patch, o.Patch); c != 0 {
		return c
	}
	switch {
	case len(v.pre) == 0 && len(o.pre) == 0:
		return 0
	case len(v.pre) == 0:
		return 1
	case len(o.pre) == 0:
		return -1
	}
	for i := 0; i < len(v.pre) && i < len(o.pre); i++ {
		if c := v.pre[i].compare(o.pre[i]); c != 0 {
			return c
		}
	}
	return cmpUint(uint64(len(v.pre)), uint64(len(o.pre)))
}

func (p semverPrerelease) compare(o semverPrerelease) int {
	switch {
	case p.isNum && o.isNum:
		return cmpUint(p.num, o.num)
	case p.isNum:
		return -1
	case o.isNum:
		return 1
	default:
		return strings.Compare(p.str, o.str)
	}
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ConvertToNative implements [ref.Val]. It supports SemverValue and string.
func (v SemverValue) ConvertToNative(typeDesc reflect.Type) (any, error) {
	if reflect.TypeOf(v).AssignableTo(typeDesc) {
		return v, nil
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

const (
	semverDigits   = "0123456789"
	semverAlphaNum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-" + semverDigits
)

// onlyFrom reports whether every byte of s is in set (true for ""). The sets
// are ASCII, so a byte test is as strict as a rune test.
func onlyFrom(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) < 0 {
			return false
		}
	}
	return true
}

// parseSemverNumber parses a major, minor or patch number; which and Which
// name it in lower and title case in the error texts, which are blang/semver's.
func parseSemverNumber(s, which, Which string) (uint64, error) {
	if !onlyFrom(s, semverDigits) {
		return 0, fmt.Errorf("Invalid character(s) found in %s number %q", which, s)
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, fmt.Errorf("%s number must not contain leading zeroes %q", Which, s)
	}
	// An empty s passes both checks and fails here, as in blang/semver.
	return strconv.ParseUint(s, 10, 64)
}

// parseSemver parses s strictly as a semantic version, with the behaviour
// and error texts of blang/semver/v4 Parse.
func parseSemver(s string) (SemverValue, error) {
	if s == "" {
		return SemverValue{}, errors.New("Version string empty")
	}
	parts := strings.SplitN(s, ".", 3)
	if len(parts) != 3 {
		return SemverValue{}, errors.New("No Major.Minor.Patch elements found")
	}
	var v SemverValue
	var err error
	if v.Major, err = parseSemverNumber(parts[0], "major", "Major"); err != nil {
		return SemverValue{}, err
	}
	if v.Minor, err = parseSemverNumber(parts[1], "minor", "Minor"); err != nil {
		return SemverValue{}, err
	}

	// Build metadata starts at the first '+'; the pre-release at the first
	// '-' before it.
	rest := parts[2]
	var build, pre []string
	if i := strings.IndexByte(rest, '+'); i >= 0 {
		build = strings.Split(rest[i+1:], ".")
		rest = rest[:i]
	}
	if i := strings.IndexByte(rest, '-'); i >= 0 {
		pre = strings.Split(rest[i+1:], ".")
		rest = rest[:i]
	}
	if v.Patch, err = parseSemverNumber(rest, "patch", "Patch"); err != nil {
		return SemverValue{}, err
	}

	for _, p := range pre {
		id, err := parseSemverPrerelease(p)
		if err != nil {
			return SemverValue{}, err
		}
		v.pre = append(v.pre, id)
	}
	for _, b := range build {
		if b == "" {
			return SemverValue{}, errors.New("Build meta data is empty")
		}
		if !onlyFrom(b, semverAlphaNum) {
			return SemverValue{}, fmt.Errorf("Invalid character(s) found in build meta data %q", b)
		}
		v.build = append(v.build, b)
	}
	return v, nil
}

// parseSemverPrerelease parses one pre-release identifier as blang/semver/v4
// NewPRVersion does.
func parseSemverPrerelease(s string) (semverPrerelease, error) {
	switch {
	case s == "":
		return semverPrerelease{}, errors.New("Prerelease is empty")
	case onlyFrom(s, semverDigits):
		if len(s) > 1 && s[0] == '0' {
			return semverPrerelease{}, fmt.Errorf("Numeric PreRelease version must not contain leading zeroes %q", s)
		}
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return semverPrerelease{}, err
		}
		return semverPrerelease{num: n, isNum: true}, nil
	case onlyFrom(s, semverAlphaNum):
		return semverPrerelease{str: s}, nil
	default:
		return semverPrerelease{}, fmt.Errorf("Invalid character(s) found in prerelease %q", s)
	}
}

// parseSemverNormalized is the lenient parse of semver(s, true), as
// apiserver's normalizeAndParse: it drops one leading "v", strips leading
// zeros from the first three dot-separated parts, pads a missing minor or
// patch with 0 and then parses strictly. Unlike blang's ParseTolerant it does
// not trim white space, and its error text is lower-case.
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
