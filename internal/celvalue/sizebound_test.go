package celvalue_test

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/common/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/internal/celvalue"
)

// exactSize is the largest size in a JSON-like value, walked independently
// of SizeBound: string byte length, bytes length, list length, map entries
// and map key length.
func exactSize(v any) uint64 {
	switch x := v.(type) {
	case string:
		return uint64(len(x))
	case []byte:
		return uint64(len(x))
	case map[string]any:
		n := uint64(len(x))
		for k, e := range x {
			n = max(n, uint64(len(k)), exactSize(e))
		}
		return n
	case []any:
		n := uint64(len(x))
		for _, e := range x {
			n = max(n, exactSize(e))
		}
		return n
	}
	return 0
}

// withSet returns m with the top-level string fields of set written over it,
// as TypedObject's value has them.
func withSet(m map[string]any, set map[string]string) map[string]any {
	out := make(map[string]any, len(m)+len(set))
	for k, v := range m {
		out[k] = v
	}
	for k, v := range set {
		out[k] = v
	}
	return out
}

// sizeStats counts how tight the typed bounds were.
type sizeStats struct {
	objects, tight int
	maxOver        uint64
	worst          string
}

// checkTyped asserts that the bound of obj's typed value covers its
// converted map, and that the bound of the map itself is exact. It returns
// the exact size and the bound.
func checkTyped(t *testing.T, name string, obj any, set map[string]string, st *sizeStats) (exact, bound uint64) {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatalf("%s: ToUnstructured: %v", name, err)
	}
	m = withSet(m, set)
	exact = exactSize(m)
	tv := celvalue.TypedObject(obj, set)
	bound = celvalue.SizeBound(tv)
	if bound < exact {
		t.Errorf("%s: SizeBound(TypedObject) = %d, below the exact %d", name, bound, exact)
	}
	// Nor below what TypedObject itself materializes.
	if mv := tv.Value(); mv != nil && exactSize(mv) > bound {
		t.Errorf("%s: SizeBound(TypedObject) = %d, below the %d of its materialized value", name, bound, exactSize(mv))
	}
	// Reading the value does not change its bound.
	if again := celvalue.SizeBound(tv); again != bound {
		t.Errorf("%s: SizeBound after materializing = %d, was %d", name, again, bound)
	}
	if got := celvalue.SizeBound(m); got != exact {
		t.Errorf("%s: SizeBound(map) = %d, want %d", name, got, exact)
	}
	if got := celvalue.SizeBound(types.DefaultTypeAdapter.NativeToValue(m)); got != exact {
		t.Errorf("%s: SizeBound(cel-go map) = %d, want %d", name, got, exact)
	}
	if st != nil {
		st.objects++
		if bound == exact {
			st.tight++
		} else if bound-exact > st.maxOver {
			st.maxOver, st.worst = bound-exact, fmt.Sprintf("%s (exact %d, bound %d)", name, exact, bound)
		}
	}
	return exact, bound
}

// TestSizeBoundCaseObjects checks the bound of every typed object of the
// conformance cases and of typedFixtures against their converted maps.
func TestSizeBoundCaseObjects(t *testing.T) {
	objs := typedFixtures()
	addCaseObjects(t, objs)
	names := make([]string, 0, len(objs))
	for n := range objs {
		names = append(names, n)
	}
	slices.Sort(names)
	var st sizeStats
	for _, name := range names {
		obj := objs[name]
		m, err := builtin.ToUnstructured(obj)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkTyped(t, name, obj, nil, nil)
		checkTyped(t, name+" (kind set)", obj, kindOf(m), &st)
	}
	t.Logf("%d objects: bound exact for %d; largest excess %d for %s", st.objects, st.tight, st.maxOver, st.worst)
}

// sizeHolder has one-letter field names, so its bound is exactly the
// largest converted value once that is longer than its field count.
type sizeHolder struct {
	A any                            `json:"a,omitempty"`
	Q resource.Quantity              `json:"q"`
	P *resource.Quantity             `json:"p,omitempty"`
	M map[string]resource.Quantity   `json:"m,omitempty"`
	L []resource.Quantity            `json:"l,omitempty"`
	T metav1.Time                    `json:"t"`
	U *metav1.Time                   `json:"u,omitempty"`
	V map[string]metav1.Time         `json:"v,omitempty"`
	I intstr.IntOrString             `json:"i"`
	J []intstr.IntOrString           `json:"j,omitempty"`
	K map[string]*intstr.IntOrString `json:"k,omitempty"`
	R runtime.RawExtension           `json:"r"`
	D metav1.Duration                `json:"d"`
	X metav1.MicroTime               `json:"x"`
	B []byte                         `json:"b,omitempty"`
	F *metav1.FieldsV1               `json:"f,omitempty"`
}

const holderFields = 16

// TestSizeBoundConverters checks the converted types one by one. The
// holder's keys are one letter long, so once a value is longer than the
// holder's field count the bound must equal the exact size, except where
// loose says otherwise.
func TestSizeBoundConverters(t *testing.T) {
	long := strings.Repeat("x", 40)
	big := resource.MustParse("123456789012345678901234567890")
	computed := resource.NewMilliQuantity(123456789012345, resource.DecimalSI) // no cached string
	binary := resource.NewQuantity(5*1024*1024*1024*1024, resource.BinarySI)
	huge := resource.MustParse("12345678901234567890123456789012345678901234567890e20")
	huge.Add(resource.MustParse("1m")) // forces the inf.Dec form, uncached
	ts := func(y int) metav1.Time { return metav1.NewTime(time.Date(y, 3, 4, 5, 6, 7, 8, time.UTC)) }
	tests := []struct {
		name    string
		h       *sizeHolder
		loose   bool // the bound may exceed the exact size
		convErr bool // the object does not convert
	}{
		{name: "zero", h: &sizeHolder{}},
		{name: "quantity 0.1", h: &sizeHolder{Q: resource.MustParse("0.1")}},
		{name: "quantity big", h: &sizeHolder{Q: big}},
		{name: "quantity computed", h: &sizeHolder{Q: *computed}},
		{name: "quantity binary", h: &sizeHolder{Q: *binary}},
		{name: "quantity dec", h: &sizeHolder{Q: huge}},
		{name: "quantity pointer", h: &sizeHolder{P: &huge}},
		{name: "quantity map", h: &sizeHolder{M: map[string]resource.Quantity{"cpu": resource.MustParse("0.000000001"), "mem": huge, "k": big}}},
		{name: "quantity list", h: &sizeHolder{L: []resource.Quantity{resource.MustParse("1.5Gi"), *computed, big}}},
		{name: "quantity in interface", h: &sizeHolder{A: *computed}},
		{name: "quantity pointer in interface", h: &sizeHolder{A: &big}},
		{name: "time", h: &sizeHolder{T: ts(2026)}},
		{name: "time year 12345", h: &sizeHolder{T: ts(12345)}},
		{name: "time year -5", h: &sizeHolder{T: ts(-5)}},
		{name: "time year 0", h: &sizeHolder{U: ptrTo(ts(0))}},
		{name: "time far", h: &sizeHolder{T: metav1.NewTime(time.Unix(math.MaxInt64/2, 0))}},
		{name: "time map", h: &sizeHolder{V: map[string]metav1.Time{"a": ts(123456), "z": {}}}},
		{name: "time in interface", h: &sizeHolder{A: ts(2026)}},
		{name: "time pointer in interface", h: &sizeHolder{A: ptrTo(ts(2026))}},
		{name: "time zero in interface", h: &sizeHolder{A: metav1.Time{}}},
		{name: "intorstring int", h: &sizeHolder{I: intstr.FromInt32(1234567890)}},
		{name: "intorstring string", h: &sizeHolder{I: intstr.FromString(long)}},
		{name: "intorstring invalid utf-8", h: &sizeHolder{I: intstr.FromString("\xff\xfe" + long)}, loose: true},
		{name: "intorstring bad type", h: &sizeHolder{I: intstr.IntOrString{Type: 7, StrVal: long}}, convErr: true},
		{name: "intorstring list", h: &sizeHolder{J: []intstr.IntOrString{intstr.FromInt32(1), intstr.FromString(long + "y")}}},
		{name: "intorstring map", h: &sizeHolder{K: map[string]*intstr.IntOrString{"a": nil, "b": ptrTo(intstr.FromString(long + "yz"))}}},
		{name: "duration", h: &sizeHolder{D: metav1.Duration{Duration: math.MinInt64}}},
		{name: "microtime", h: &sizeHolder{X: metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC))}},
		{name: "raw extension", h: &sizeHolder{R: runtime.RawExtension{Raw: []byte(`{"a":[1,2,"` + long + `",{"b":null}],"` + long + `z":1}`)}}},
		{name: "raw extension list", h: &sizeHolder{R: runtime.RawExtension{Raw: []byte(`[` + strings.Repeat(`1,`, 99) + `1]`)}}},
		{name: "raw extension object", h: &sizeHolder{R: runtime.RawExtension{Object: &corev1.ConfigMap{Data: map[string]string{"k": long}}}}},
		{name: "fields", h: &sizeHolder{F: &metav1.FieldsV1{Raw: wideFields(300, 200)}}},
		{name: "bytes 0", h: &sizeHolder{B: []byte{}}},
		{name: "bytes 100", h: &sizeHolder{B: make([]byte, 100)}},
		{name: "bytes in interface", h: &sizeHolder{A: make([]byte, 31)}},
		{name: "map in interface", h: &sizeHolder{A: map[string]any{"k": []any{long, []byte(long)}}}},
		{name: "struct in interface", h: &sizeHolder{A: corev1.ConfigMap{Data: map[string]string{long: "v"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.convErr {
				// The failing part is an error value, which has no size.
				if got := celvalue.SizeBound(celvalue.TypedValue(tc.h)); got != holderFields {
					t.Errorf("SizeBound = %d, want %d", got, holderFields)
				}
				return
			}
			exact, bound := checkTyped(t, tc.name, tc.h, nil, nil)
			if !tc.loose && exact > holderFields && bound != exact {
				t.Errorf("SizeBound = %d, want the exact %d", bound, exact)
			}
			// A struct value (not a pointer) is made addressable first.
			if got := celvalue.SizeBound(celvalue.TypedValue(*tc.h)); got != bound {
				t.Errorf("SizeBound(TypedValue(struct)) = %d, want %d as for the pointer", got, bound)
			}
			// Any other Go value is read as TypedValue reads it.
			if got := celvalue.SizeBound(tc.h); got != bound {
				t.Errorf("SizeBound(Go value) = %d, want %d as for TypedValue", got, bound)
			}
		})
	}
}

// wideFields is FieldsV1 JSON with n keys, one of them long.
func wideFields(n, long int) []byte {
	var b strings.Builder
	b.WriteString(`{"f:` + strings.Repeat("k", long) + `":{}`)
	for i := range n - 1 {
		fmt.Fprintf(&b, `,"f:%d":{".":{}}`, i)
	}
	b.WriteString("}")
	return []byte(b.String())
}

// TestSizeBoundObjects checks hand-built objects of built-in kinds.
func TestSizeBoundObjects(t *testing.T) {
	secret := func(n int) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Data: map[string][]byte{"k": make([]byte, n)}}
	}
	cm := &corev1.ConfigMap{Data: map[string]string{}}
	for i := range 500 {
		cm.Data[fmt.Sprint(i)] = "v"
	}
	quantities := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("0.1"),
		corev1.ResourceMemory: resource.MustParse("1e3"),
		"example.com/big":     resource.MustParse("123456789012345678901234567890123456789012345678901234567890"),
		"example.com/small":   resource.MustParse("-1024Ki"),
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Resources: corev1.ResourceRequirements{Limits: quantities, Requests: corev1.ResourceList{"x": *resource.NewScaledQuantity(7, 30)}},
		LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString(strings.Repeat("p", 70))}}},
	}}}}
	managed := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		{Manager: "m", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: wideFields(2, 300)}},
		{Manager: "w", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: wideFields(1000, 3)}},
	}}}
	revision := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: []byte(`{"spec":{"list":[` + strings.Repeat(`"a",`, 149) + `"b"]}}`)}}
	type Embedded struct {
		Inner string `json:"inner"`
	}
	type withEmbedded struct {
		Embedded
		*ConvInner `json:",inline"`
		Outer      string `json:"outer"`
	}
	// A struct of many fields with one-letter names: its map has an entry
	// per field even when they are all zero.
	var fields []reflect.StructField
	for i := range 60 {
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: reflect.TypeFor[int](), Tag: reflect.StructTag(fmt.Sprintf(`json:"%c"`, rune('A'+i)))})
	}
	wide := reflect.New(reflect.StructOf(fields)).Interface()
	tests := []struct {
		name  string
		obj   any
		set   map[string]string
		exact bool // the bound must be exact
	}{
		{name: "secret 0", obj: secret(0)},
		{name: "secret 1", obj: secret(1)},
		{name: "secret 2", obj: secret(2)},
		{name: "secret 3", obj: secret(3)},
		{name: "secret 4", obj: secret(4)},
		{name: "secret 100", obj: secret(100), exact: true},
		{name: "configmap wide", obj: cm, exact: true},
		{name: "pod quantities", obj: pod, exact: true},
		{name: "managed fields", obj: managed, exact: true},
		{name: "controller revision", obj: revision, exact: true},
		{name: "embedded", obj: &withEmbedded{Embedded: Embedded{Inner: strings.Repeat("i", 50)}, Outer: "o"}, exact: true},
		{name: "embedded nil pointer", obj: &withEmbedded{}},
		{name: "wide zero struct", obj: wide, exact: true},
		{name: "empty deployment", obj: &appsv1.Deployment{}},
		{name: "empty pod", obj: &corev1.Pod{}},
		{name: "nil fields", obj: &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{}}, NodeSelector: map[string]string{}, Volumes: []corev1.Volume{}}}},
		{name: "long apiVersion", obj: &appsv1.Deployment{}, set: map[string]string{"apiVersion": strings.Repeat("v", 300), "kind": "Deployment"}, exact: true},
		{name: "set replaces a field", obj: &corev1.ConfigMap{Data: map[string]string{"k": strings.Repeat("d", 80)}}, set: map[string]string{"data": "x"}},
		{name: "set adds many", obj: &corev1.ConfigMap{}, set: manyKeys(100)},
		{name: "conv zero", obj: &convTest{}},
		{name: "conv full", obj: &convTest{ConvInner: &ConvInner{X: strings.Repeat("x", 30)}, Dup: "d", Bytes: make([]byte, 60),
			NamedList: []convNamed{"a"}, Iface: []any{strings.Repeat("i", 20)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			exact, bound := checkTyped(t, tc.name, tc.obj, tc.set, nil)
			if tc.exact && bound != exact {
				t.Errorf("SizeBound = %d, want the exact %d", bound, exact)
			}
		})
	}
}

// TestSizeBoundConversionError checks a value part of which fails to
// convert: the failing part is an error value, which has no size.
func TestSizeBoundConversionError(t *testing.T) {
	obj := &convTest{Big: 1 << 63, Plain: strings.Repeat("p", 50)}
	if got := celvalue.SizeBound(celvalue.TypedValue(obj)); got != 50 {
		t.Errorf("SizeBound = %d, want 50", got)
	}
}

// TestSizeBoundQuantities compares the bound of single quantities, which
// SizeBound works out without running their converter, with the length of
// their String.
func TestSizeBoundQuantities(t *testing.T) {
	var qs []resource.Quantity
	for _, s := range []string{
		"0", "1", "-1", "0.1", "100m", "1000m", "1.5", "1e3", "1E3", "1e-3", "12e6", "128Mi", "512Mi", "1Gi", "1.5Gi", "1023", "1024",
		"-1024Ki", "1025Ki", "1023Ki", "8Ei", "7Ei", "1k", "1000k", "1000000", "0.000000001", "0.0000000001", "123456789012345678901234567890",
		"9223372036854775807", "-9223372036854775808", "9223372036854775808", "1Pi", "1024Pi", "0.5Ki", "100n", "100u", "1e18", "1e19", "1e100",
	} {
		qs = append(qs, resource.MustParse(s))
	}
	for _, v := range []int64{0, 1, 1023, 1024, 1025, 1 << 20, 3 << 30, 1<<62 + 1<<40, math.MaxInt64, math.MinInt64, math.MinInt64 + 1, -(1 << 40), -1024, -1023, -1025} {
		for _, f := range []resource.Format{resource.BinarySI, resource.DecimalSI, resource.DecimalExponent, "bogus"} {
			qs = append(qs, *resource.NewQuantity(v, f))
			for _, scale := range []resource.Scale{-9, -3, 3, 6, 18} {
				qs = append(qs, *resource.NewScaledQuantity(v, scale))
				q := resource.NewScaledQuantity(v, scale)
				q.Format = f
				qs = append(qs, *q)
			}
		}
	}
	sum := resource.MustParse("1Ki")
	sum.Add(resource.MustParse("0.5"))
	qs = append(qs, sum)
	dec := resource.MustParse("3Gi")
	dec.ToDec()
	qs = append(qs, dec)
	for _, q := range qs {
		c := q // String caches its result: keep q as it is.
		want := uint64(len(c.String()))
		for name, v := range map[string]any{
			"list": []resource.Quantity{q}, "map": map[string]resource.Quantity{"": q}, "pointer": []*resource.Quantity{&q},
			"interface": []any{q},
		} {
			if got := celvalue.SizeBound(celvalue.TypedValue(v)); got != want {
				t.Errorf("%s of %q (format %s): SizeBound = %d, want %d", name, c.String(), q.Format, got, want)
			}
		}
	}
}

// TestSizeBoundTimes does the same for times.
func TestSizeBoundTimes(t *testing.T) {
	for _, tm := range []time.Time{
		{}, time.Unix(0, 0), time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600)), time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-99999, 1, 1, 0, 0, 0, 0, time.UTC), time.Unix(math.MaxInt64/4, 0), time.Unix(math.MinInt64/4, 0),
		time.Unix(math.MaxInt64, 999999999), time.Unix(math.MinInt64, 0),
	} {
		mt := metav1.NewTime(tm)
		want := uint64(1) // the list's length
		if s, ok := mt.ToUnstructured().(string); ok {
			want = max(want, uint64(len(s)))
		}
		for name, v := range map[string]any{
			"list": []metav1.Time{mt}, "map": map[string]metav1.Time{"": mt}, "pointer": []*metav1.Time{&mt},
		} {
			if got := celvalue.SizeBound(celvalue.TypedValue(v)); got != want {
				t.Errorf("%s of %v: SizeBound = %d, want %d", name, tm, got, want)
			}
		}
		if got := celvalue.SizeBound(celvalue.TypedValue([]any{mt})); got != want {
			t.Errorf("interface of %v: SizeBound = %d, want %d", tm, got, want)
		}
	}
}

// ptrMarshaler converts only when addressable, through its pointer.
type ptrMarshaler struct{ X string }

func (p *ptrMarshaler) MarshalJSON() ([]byte, error) {
	return json.Marshal(strings.Repeat("m", 30))
}

// TestSizeBoundAddressability checks that converters with pointer
// receivers apply where TypedValue applies them: not to map values or to
// what an interface holds, which it sees unaddressable (the conversion
// fails: an error value, which has no size).
func TestSizeBoundAddressability(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want uint64
	}{
		{"slice element", []ptrMarshaler{{}}, 30},
		{"pointer", []*ptrMarshaler{{}}, 30},
		{"map value", map[string]ptrMarshaler{"k": {}}, 1},
		{"map value pointer", map[string]*ptrMarshaler{"k": {}}, 30},
		{"interface", []any{ptrMarshaler{}}, 1},
		{"struct in map value", map[string]struct{ P ptrMarshaler }{"k": {}}, 1},
		{"slice in map value", map[string][]ptrMarshaler{"k": {{}}}, 30},
	} {
		tv := celvalue.TypedValue(tc.v)
		if got := celvalue.SizeBound(tv); got != tc.want {
			t.Errorf("%s: SizeBound = %d, want %d (value %v)", tc.name, got, tc.want, tv)
		}
	}
}

// sizeFresh is sized first by TestSizeBoundConcurrent, so that goroutines
// build its plan at the same time.
type sizeFresh struct {
	Items map[string][]sizeFreshItem `json:"items"`
}

type sizeFreshItem struct {
	Q resource.Quantity `json:"q"`
	A any               `json:"a"`
}

// TestSizeBoundConcurrent sizes shared values from several goroutines (run
// it with -race).
func TestSizeBoundConcurrent(t *testing.T) {
	fresh := &sizeFresh{Items: map[string][]sizeFreshItem{"k": {{Q: resource.MustParse("0.1"), A: sizeFreshItem{A: strings.Repeat("a", 40)}}}}}
	d := sizeDeployment(3)
	values := []any{celvalue.TypedValue(fresh), celvalue.TypedObject(d, map[string]string{"kind": "Deployment"}), d}
	want := make([]uint64, len(values))
	want[0] = 40
	for i := 1; i < len(values); i++ {
		want[i] = celvalue.SizeBound(values[i])
	}
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 50 {
				for i, v := range values {
					if got := celvalue.SizeBound(v); got != want[i] {
						t.Errorf("value %d: SizeBound = %d, want %d", i, got, want[i])
						return
					}
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
}

func manyKeys(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprintf("k%d", i)] = "v"
	}
	return m
}

func TestSizeBoundValues(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want uint64
	}{
		{"nil", nil, 0},
		{"empty string", "", 0},
		{"string", "abc", 3},
		{"string counts bytes", "héllo", 6},
		{"int", int64(5), 0},
		{"double", 1.5, 0},
		{"bool", true, 0},
		{"empty list", []any{}, 0},
		{"list", []any{int64(1), int64(2), int64(3)}, 3},
		{"list of string", []any{"abcdef"}, 6},
		{"empty map", map[string]any{}, 0},
		{"map", map[string]any{"k": int64(1)}, 1},
		{"map key", map[string]any{"longkey": int64(1)}, 7},
		{"nested list", map[string]any{"a": []any{1.0, 2.0, 3.0, 4.0}}, 4},
		{"nested map", map[string]any{"a": map[string]any{"b": "xyzxyzxyz"}}, 9},
		{"nested null", map[string]any{"a": nil, "b": []any{nil, nil}}, 2},
		{"bytes", []byte("abcd"), 4},
		{"bytes in map", map[string]any{"a": []byte{1, 2}}, 2},
		{"string map", map[string]string{"k": "vvvvv"}, 5},
		{"string list", []string{"a", "bb"}, 2},
		{"json number", map[string]any{"n": json.Number("12345")}, 5},
		{"cel string", types.String("abcd"), 4},
		{"cel bytes", types.Bytes("abcdefg"), 7},
		{"cel int", types.Int(5), 0},
		{"cel error", types.NewErr("a long error message"), 0},
		{"cel null", types.NullValue, 0},
		{"cel map", types.DefaultTypeAdapter.NativeToValue(map[string]any{"abc": []any{"x"}}), 3},
		{"cel list", types.NewStringList(types.DefaultTypeAdapter, []string{"a", "bb", "ccc", "d"}), 4},
		{"cel optional", types.OptionalOf(types.String("abcde")), 5},
		{"cel optional none", types.OptionalNone, 0},
		{"lazy", celvalue.Lazy(func() any { return "abcd" }), 4},
		{"lazy nil", celvalue.Lazy(func() any { return nil }), 0},
		{"typed string map", celvalue.TypedValue(map[string]string{"kk": "v"}), 2},
		{"typed list", celvalue.TypedValue([]string{"a", "b", "c"}), 3},
		{"typed bytes are base64", celvalue.TypedValue([]byte{1, 2, 3, 4}), 8},
		{"typed nil", celvalue.TypedValue(nil), 0},
		{"typed json", celvalue.TypedValue(map[string]any{"a": []any{"xy", map[string]any{"b": int64(1)}}}), 2},
		{"go map of lists", map[string][]string{"a": {"b", "c", "d"}}, 3},
		{"go int keys", map[int]string{1: "abc"}, 3},
		{"go array", [5]int{}, 5},
		{"go pointer", ptrTo("abc"), 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := celvalue.SizeBound(tc.v); got != tc.want {
				t.Errorf("SizeBound(%#v) = %d, want %d", tc.v, got, tc.want)
			}
		})
	}
}

func TestSizeBoundDeep(t *testing.T) {
	const depth = 20000
	var m any = "leaf"
	var l any = []any{}
	for range depth {
		m = map[string]any{"a": m}
		l = []any{l, "xy"}
	}
	for _, tc := range []struct {
		name string
		v    any
		want uint64
	}{
		{"map", m, 4},
		{"list", l, 2},
		{"typed map", celvalue.TypedValue(m), 4},
		{"typed list", celvalue.TypedValue(l), 2},
		{"cel map", types.DefaultTypeAdapter.NativeToValue(m), 4},
	} {
		if got := celvalue.SizeBound(tc.v); got != tc.want {
			t.Errorf("%s: SizeBound = %d, want %d", tc.name, got, tc.want)
		}
	}
	var chain *sizeNode
	for range depth {
		chain = &sizeNode{Name: "x", A: chain}
	}
	if got := celvalue.SizeBound(celvalue.TypedValue(chain)); got != 4 {
		t.Errorf("typed chain: SizeBound = %d, want 4", got)
	}
}

// sizeChain is sized through a pointer before anything else builds its
// plan, so the plan of *sizeChain is built while that of sizeChain is.
type sizeChain struct {
	Next *sizeChain `json:"next"`
	Name string     `json:"name"`
}

func TestSizeBoundRecursiveType(t *testing.T) {
	c := &sizeChain{Name: "x", Next: &sizeChain{Name: strings.Repeat("n", 10)}}
	if got := celvalue.SizeBound(c); got != 10 {
		t.Errorf("SizeBound = %d, want 10", got)
	}
	checkTyped(t, "chain", c, nil, nil)
}

type sizeNode struct {
	Name string    `json:"name"`
	A    *sizeNode `json:"a"`
	B    *sizeNode `json:"b"`
}

// TestSizeBoundCycle checks that cyclic values, which no admission input
// is, end in "no bound" rather than a crash or an endless walk.
func TestSizeBoundCycle(t *testing.T) {
	m := map[string]any{}
	m["a"], m["b"] = m, []any{m, m}
	n := &sizeNode{}
	n.A, n.B = n, n
	for name, v := range map[string]any{"map": m, "typed": celvalue.TypedValue(n)} {
		if got := celvalue.SizeBound(v); got != math.MaxUint64 {
			t.Errorf("%s: SizeBound = %d, want MaxUint64", name, got)
		}
	}
}

// sizeDeployment is a Deployment with n containers, as a small workload
// typically is.
func sizeDeployment(n int) *appsv1.Deployment {
	labels := map[string]string{"app": "web", "tier": "frontend"}
	var containers []corev1.Container
	for i := range n {
		containers = append(containers, corev1.Container{
			Name:  fmt.Sprintf("c%d", i),
			Image: "registry.example.com/team/app:v1.2.3",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Env:   []corev1.EnvVar{{Name: "MODE", Value: "production"}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
			},
			LivenessProbe:   &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}, PeriodSeconds: 10},
			ReadinessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}},
			ImagePullPolicy: corev1.PullIfNotPresent,
		})
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod", Labels: labels,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptrTo(int32(3)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: containers},
			},
		},
	}
}

func TestSizeBoundDeployment(t *testing.T) {
	set := map[string]string{"apiVersion": "apps/v1", "kind": "Deployment"}
	for _, n := range []int{2, 50} {
		d := sizeDeployment(n)
		checkTyped(t, fmt.Sprintf("deployment-%d", n), d, set, nil)
		v := celvalue.TypedObject(d, set)
		if allocs := testing.AllocsPerRun(100, func() { celvalue.SizeBound(v) }); allocs != 0 {
			t.Errorf("deployment-%d: SizeBound allocates %v times, want 0", n, allocs)
		}
	}
}

func BenchmarkSizeBound(b *testing.B) {
	set := map[string]string{"apiVersion": "apps/v1", "kind": "Deployment"}
	for _, n := range []int{2, 50} {
		d := sizeDeployment(n)
		b.Run(fmt.Sprintf("typed-%d", n), func(b *testing.B) {
			v := celvalue.TypedObject(d, set)
			b.ReportAllocs()
			for b.Loop() {
				celvalue.SizeBound(v)
			}
		})
		m, err := builtin.ToUnstructured(d)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("unstructured-%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				celvalue.SizeBound(m)
			}
		})
	}
}

func FuzzSizeBound(f *testing.F) {
	d, err := json.Marshal(sizeDeployment(2))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		`null`, `"str"`, `{}`, `[]`, `{"a":"b"}`, `[1,"xyz",{"k":[]}]`, `{"a":{"b":{"c":[1,2,3,4,5]}}}`,
		`{"metadata":{"name":"n","labels":{"k":"v"}},"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"0.1"}}}]}}}}`,
		`{"spec":{"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":3}}},"metadata":{"creationTimestamp":"2026-01-02T03:04:05Z"}}`,
		string(d),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if err := json.Unmarshal(data, &v); err == nil {
			exact := exactSize(v)
			if got := celvalue.SizeBound(v); got != exact {
				t.Errorf("SizeBound(%s) = %d, want %d", data, got, exact)
			}
			if got := celvalue.SizeBound(celvalue.TypedValue(v)); got != exact {
				t.Errorf("SizeBound(TypedValue(%s)) = %d, want %d", data, got, exact)
			}
		}
		var typed appsv1.Deployment
		if err := json.Unmarshal(data, &typed); err != nil {
			return
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&typed)
		if err != nil {
			return
		}
		if exact, got := exactSize(m), celvalue.SizeBound(celvalue.TypedValue(&typed)); got < exact {
			t.Errorf("SizeBound(TypedValue(%s)) = %d, below the exact %d", data, got, exact)
		}
	})
}
