package library_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vapkit/vapkit/celenv/internal/library"
)

const quantityRegexErr = `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`

func TestQuantity(t *testing.T) {
	t.Parallel()
	runExprCases(t, allLibsEnv(t), []exprCase{
		// quantity and isQuantity
		{name: "parse", expr: `quantity("12Mi") == quantity("12582912")`},
		{name: "parse invalid suffix", expr: `quantity("10Mo")`, evalErr: quantityRegexErr},
		{name: "parse suffix passing regex", expr: `quantity("10Mm")`, evalErr: "unable to parse quantity's suffix"},
		{name: "parse empty", expr: `quantity("")`, evalErr: quantityRegexErr},
		{name: "parse upper k", expr: `quantity("200K")`, evalErr: "unable to parse quantity's suffix"},
		{name: "parse word", expr: `quantity("Three")`, evalErr: quantityRegexErr},
		// apimachinery accepts a bare suffix as zero, although apiserver's
		// documentation lists quantity('Mi') as an error.
		{name: "parse bare suffix", expr: `quantity("Mi") == quantity("0") && isQuantity("m") && isQuantity(".")`},
		{name: "isQuantity plain", expr: `isQuantity("20")`},
		{name: "isQuantity decimal SI", expr: `isQuantity("20M")`},
		{name: "isQuantity binary SI", expr: `isQuantity("20Mi")`},
		{name: "isQuantity exponent", expr: `isQuantity("1.5e3")`},
		{name: "isQuantity invalid suffix", expr: `!isQuantity("20Mo")`},
		{name: "isQuantity suffix passing regex", expr: `!isQuantity("10Mm")`},
		{name: "isQuantity comma", expr: `!isQuantity("1,3G")`},
		{name: "isQuantity empty", expr: `!isQuantity("")`},
		{name: "isQuantity no overload", expr: `isQuantity([1, 2, 3])`, compileErr: "found no matching overload for 'isQuantity' applied to"},

		// equality: semantic, and asymmetric for add/sub results
		{name: "equality reflexive", expr: `quantity("200M") == quantity("200M")`},
		{name: "equality symmetric", expr: `quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")`},
		{name: "equality transitive", expr: `quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && quantity("0.002G") == quantity("2000k")`},
		{name: "equality binary", expr: `quantity("1Gi") == quantity("1024Mi")`},
		{name: "inequality", expr: `quantity("200M") != quantity("0.3G")`},
		{name: "equality in list", expr: `[quantity("1k")] == [quantity("1000")]`},
		{name: "result on left of ==", expr: `quantity("1").add(1) == quantity("2")`},
		{name: "result on right of ==", expr: `quantity("2") == quantity("1").add(1)`, evalErr: "no such overload"},
		{name: "results on both sides of ==", expr: `quantity("1").sub(1) == quantity("1").sub(1)`, evalErr: "no such overload"},
		{name: "no string conversion", expr: `string(quantity("1"))`, compileErr: "found no matching overload for 'string'"},

		// sign is global only
		{name: "sign positive", expr: `sign(quantity("5m")) == 1`},
		{name: "sign zero", expr: `sign(quantity("0")) == 0`},
		{name: "sign negative", expr: `sign(quantity("-1Ki")) == -1`},
		{name: "sign of result", expr: `sign(quantity("1").sub(2)) == -1`},
		{name: "sign is not a member", expr: `quantity("1").sign()`, compileErr: "found no matching overload for 'sign'"},

		// comparisons
		{name: "less", expr: `quantity("50M").isLessThan(quantity("50Mi"))`},
		{name: "less obvious", expr: `quantity("50M").isLessThan(quantity("100M"))`},
		{name: "less false", expr: `!quantity("100M").isLessThan(quantity("50M"))`},
		{name: "less equal false", expr: `!quantity("1k").isLessThan(quantity("1000"))`},
		{name: "greater", expr: `quantity("50Mi").isGreaterThan(quantity("50M"))`},
		{name: "greater obvious", expr: `quantity("150Mi").isGreaterThan(quantity("100Mi"))`},
		{name: "greater false", expr: `!quantity("50M").isGreaterThan(quantity("100M"))`},
		{name: "compare equal", expr: `quantity("200M").compareTo(quantity("0.2G")) == 0`},
		{name: "compare less", expr: `quantity("50M").compareTo(quantity("50Mi")) == -1`},
		{name: "compare greater", expr: `quantity("50Mi").compareTo(quantity("50M")) == 1`},
		{name: "compare with result", expr: `quantity("1").compareTo(quantity("1").add(1)) == -1`},
		{name: "dynamic dispatch", expr: `dyn(quantity("1")).isLessThan(quantity("2"))`},

		// arithmetic
		{name: "add quantity", expr: `quantity("50k").add(quantity("20")) == quantity("50.02k")`},
		{name: "add int", expr: `!quantity("50k").add(20).isLessThan(quantity("50020"))`},
		{name: "add int equal", expr: `quantity("50k").add(20) == quantity("50020")`},
		{name: "sub quantity", expr: `quantity("50k").sub(quantity("20")) == quantity("49.98k")`},
		{name: "sub int", expr: `quantity("50k").sub(20) == quantity("49980")`},
		{name: "add mixed suffixes", expr: `quantity("1Gi").add(quantity("1G")) == quantity("2073741824")`},
		{name: "chain", expr: `quantity("50k").add(20).sub(quantity("100k")).asInteger() == -49980`},
		{name: "chain negative int", expr: `quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() == 20`},
		{name: "add does not mutate receiver", expr: `[quantity("9999999999999999999999999999999999999")].all(x, x.add(quantity("1")).compareTo(x.add(quantity("2"))) == -1)`},
		{name: "sub does not mutate receiver", expr: `[quantity("10")].all(x, x.sub(1) == quantity("9") && x.sub(2) == quantity("8") && x == quantity("10"))`},

		// conversions to scalars
		{name: "asInteger", expr: `quantity("50k").asInteger() == 50000`},
		{name: "asInteger milli", expr: `quantity("1500m").asInteger()`, evalErr: "cannot convert value to integer"},
		// Integral but stored at milli scale: still not convertible.
		{name: "asInteger integral milli", expr: `quantity("500m").add(quantity("1.5")).asInteger()`, evalErr: "cannot convert value to integer"},
		{name: "asInteger overflow", expr: `quantity("9999999999999999999999999999999999999G").asInteger()`, evalErr: "cannot convert value to integer"},
		{name: "isInteger false overflow", expr: `!quantity("9999999999999999999999999999999999999G").isInteger()`},
		{name: "isInteger false fraction", expr: `!quantity("0.5").isInteger()`},
		{name: "isInteger true", expr: `quantity("50").isInteger()`},
		{name: "isInteger large", expr: `quantity("50000000G").isInteger()`},
		{name: "asApproximateFloat", expr: `quantity("50.703k").asApproximateFloat() == 50703.0`},
		{name: "asApproximateFloat after sub", expr: `quantity("50k").sub(20000).asApproximateFloat() == 30000.0`},
		{name: "asApproximateFloat huge", expr: `quantity("9999999999999999999999999999999999999G").asApproximateFloat() > 1e45`},
	})
}

func TestQuantityValue(t *testing.T) {
	t.Parallel()
	q := resource.MustParse("1Gi")
	v := library.QuantityValue{Quantity: &q}
	if got := v.Type().TypeName(); got != "kubernetes.Quantity" {
		t.Errorf("Type().TypeName() = %q, want %q", got, "kubernetes.Quantity")
	}
	if got := v.ConvertToType(types.TypeType); got != library.QuantityType {
		t.Errorf("ConvertToType(TypeType) = %v, want %v", got, library.QuantityType)
	}
	if got := v.ConvertToType(library.QuantityType); got != v {
		t.Errorf("ConvertToType(QuantityType) = %v, want %v", got, v)
	}
	if got := v.ConvertToType(types.StringType); !types.IsError(got) {
		t.Errorf("ConvertToType(StringType) = %v, want an error", got)
	}
	s, err := v.ConvertToNative(reflect.TypeFor[string]())
	if err != nil || s != "1Gi" {
		t.Errorf("ConvertToNative(string) = %v, %v, want 1Gi, nil", s, err)
	}
	n, err := v.ConvertToNative(reflect.TypeFor[*resource.Quantity]())
	if p, ok := n.(*resource.Quantity); err != nil || !ok || p.Cmp(q) != 0 || p == &q {
		t.Errorf("ConvertToNative(*resource.Quantity) = %v, %v, want a copy of 1Gi", n, err)
	}
	if _, err := v.ConvertToNative(reflect.TypeFor[int]()); err == nil {
		t.Errorf("ConvertToNative(int) succeeded, want an error")
	}
	if got := v.Equal(library.QuantityValue{}); got != types.False {
		t.Errorf("Equal(zero) = %v, want false", got)
	}
	if got := v.Equal(types.String("1Gi")); !types.IsError(got) {
		t.Errorf("Equal(string) = %v, want an error", got)
	}
}

// TestQuantitySemverFormatOverloadIDs pins the function names and overload IDs to apiserver's,
// which cost estimation and tooling key on.
func TestQuantitySemverFormatOverloadIDs(t *testing.T) {
	t.Parallel()
	want := map[string][]string{
		"quantity":           {"string_to_quantity"},
		"isQuantity":         {"is_quantity_string"},
		"sign":               {"quantity_sign"},
		"asApproximateFloat": {"quantity_get_float"},
		"asInteger":          {"quantity_get_int"},
		"isInteger":          {"quantity_is_integer"},
		"add":                {"quantity_add", "quantity_add_int"},
		"sub":                {"quantity_sub", "quantity_sub_int"},
		"isGreaterThan":      {"quantity_is_greater_than", "semver_is_greater_than"},
		"isLessThan":         {"quantity_is_less_than", "semver_is_less_than"},
		"compareTo":          {"quantity_compare_to", "semver_compare_to"},
		"semver":             {"string_to_semver", "string_bool_to_semver"},
		"isSemver":           {"is_semver_string", "is_semver_string_bool"},
		"major":              {"semver_major"},
		"minor":              {"semver_minor"},
		"patch":              {"semver_patch"},
		"validate":           {"format-validate"},
		"format.named":       {"format-named"},
	}
	for _, n := range []string{"byte", "date", "datetime", "dns1035Label", "dns1035LabelPrefix", "dns1123Label",
		"dns1123LabelPrefix", "dns1123Subdomain", "dns1123SubdomainPrefix", "labelValue", "qualifiedName", "uri", "uuid"} {
		want["format."+n] = []string{"format." + n}
	}
	checkOverloadIDs(t, allLibsEnv(t), want, nil)
}

func TestQuantityTwice(t *testing.T) {
	t.Parallel()
	env := newExprEnv(t, library.Quantity(), library.Quantity())
	runExprCases(t, env, []exprCase{{name: "works", expr: `quantity("1") == quantity("1000m")`}})
}

func ExampleQuantity() {
	env, err := cel.NewEnv(library.Quantity())
	if err != nil {
		fmt.Println(err)
		return
	}
	printEvals(env,
		`quantity("1Gi").isGreaterThan(quantity("1G"))`,
		`quantity("1k").add(24).asInteger()`,
		`sign(quantity("-3k"))`,
		`quantity("1.5").asInteger()`,
	)
	// Output:
	// quantity("1Gi").isGreaterThan(quantity("1G")): true
	// quantity("1k").add(24).asInteger(): 1024
	// sign(quantity("-3k")): -1
	// quantity("1.5").asInteger(): error: cannot convert value to integer
}
