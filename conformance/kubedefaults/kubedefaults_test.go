package kubedefaults

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/internal/builtin/defaulting"
)

// objectsPerKind is how many generated objects each kind gets.
func objectsPerKind() int {
	if testing.Short() {
		return 300
	}
	return 3000
}

// kindResult is one kind's line of the report.
type kindResult struct {
	name              string
	objects, differ   int
	kubePanics        int
	kube, vapkit      bool
	known, typicalRan int
}

// TestDefaultingMatchesKube defaults generated and hand-written objects of
// every kind kube 1.37 or vapkit defaults, once with kube's functions and
// once with vapkit's built-in scheme, and requires the same result.
func TestDefaultingMatchesKube(t *testing.T) {
	kube, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	// vapkit's functions alone: builtin.Scheme() also knows every type
	// (and gives the kinds their names), and is checked to default as
	// these do.
	vapkit := runtime.NewScheme()
	defaulting.Register(vapkit)
	named := builtin.Scheme()
	kubeTypes, err := defaultedTypes(kube)
	if err != nil {
		t.Fatal(err)
	}
	vapkitTypes, err := defaultedTypes(vapkit)
	if err != nil {
		t.Fatal(err)
	}

	enums, err := apiEnums(named)
	if err != nil {
		t.Fatal(err)
	}

	typical := map[reflect.Type][]runtime.Object{}
	for _, obj := range slices.Concat(typicalCoreObjects(), typicalGroupObjects()) {
		typ := reflect.TypeOf(obj)
		typical[typ] = append(typical[typ], obj)
	}

	type kind struct {
		name string
		typ  reflect.Type
	}
	var kinds []kind
	for typ := range union(kubeTypes, vapkitTypes) {
		name, ok := kindName(named, typ)
		if !ok {
			t.Errorf("%v has a defaulting function but is no kind of vapkit's built-in scheme", typ)
			continue
		}
		kinds = append(kinds, kind{name, typ})
	}
	slices.SortFunc(kinds, func(a, b kind) int { return strings.Compare(a.name, b.name) })
	for name := range KnownNotDefaulted {
		if !slices.ContainsFunc(kinds, func(k kind) bool { return k.name == name }) {
			t.Errorf("KnownNotDefaulted lists %s, which kube does not default: remove it", name)
		}
	}

	var report []kindResult
	for _, k := range kinds {
		res := kindResult{name: k.name, kube: kubeTypes[k.typ], vapkit: vapkitTypes[k.typ]}
		t.Run(k.name, func(t *testing.T) {
			switch {
			case KnownNotDefaulted[k.name] && res.vapkit:
				t.Errorf("vapkit now defaults %s: remove it from KnownNotDefaulted", k.name)
			case KnownNotDefaulted[k.name]:
				res.known = 1
				t.Logf("known gap: kube defaults %s, vapkit does not yet", k.name)
				return
			case res.kube && !res.vapkit:
				t.Errorf("kube defaults %s, vapkit does not", k.name)
			case !res.kube && res.vapkit:
				t.Errorf("vapkit defaults %s, kube does not", k.name)
			}
			compare := func(obj runtime.Object) {
				res.objects++
				want, got := obj.DeepCopyObject(), obj.DeepCopyObject()
				if panicked(func() { kube.Default(want) }) {
					res.kubePanics++
					return
				}
				if panicked(func() { vapkit.Default(got) }) {
					res.differ++
					t.Errorf("vapkit's defaulting panicked on %s", describe(obj))
					return
				}
				if viaBuiltin := obj.DeepCopyObject(); !panicked(func() { named.Default(viaBuiltin) }) {
					if diff := cmp.Diff(got, viaBuiltin, quantityComparer, taintTimeComparer); diff != "" {
						t.Errorf("builtin.Scheme() defaults %s otherwise than vapkit's functions (-functions +scheme):\n%s", describe(obj), diff)
					}
				}
				if diff := cmp.Diff(want, got, quantityComparer, taintTimeComparer); diff != "" {
					res.differ++
					if res.differ <= 3 {
						t.Errorf("defaulting %s differs (-kube +vapkit):\n%s", describe(obj), diff)
					}
				}
			}
			for _, obj := range typical[k.typ] {
				res.typicalRan++
				compare(obj)
			}
			seed := seedOf(k.name)
			f := filler{r: rand.New(rand.NewPCG(seed, 1)), enums: enums}
			for range objectsPerKind() {
				obj := reflect.New(k.typ.Elem()).Interface().(runtime.Object)
				f.fillObject(obj)
				compare(obj)
			}
			if res.differ > 3 {
				t.Errorf("%d of %d objects differ", res.differ, res.objects)
			}
		})
		report = append(report, res)
	}
	t.Log(formatReport(report))
}

// defaultedTypes are the types s has a defaulting function for. The
// scheme does not say, so this reads its private table.
func defaultedTypes(s *runtime.Scheme) (map[reflect.Type]bool, error) {
	field := reflect.ValueOf(s).Elem().FieldByName("defaulterFuncs")
	if !field.IsValid() || field.Kind() != reflect.Map || field.Type().Key() != reflect.TypeFor[reflect.Type]() {
		return nil, fmt.Errorf("runtime.Scheme has no defaulterFuncs map keyed by reflect.Type any more")
	}
	field = reflect.NewAt(field.Type(), unsafe.Pointer(field.UnsafeAddr())).Elem()
	types := map[reflect.Type]bool{}
	for _, key := range field.MapKeys() {
		types[key.Interface().(reflect.Type)] = true
	}
	return types, nil
}

func union(a, b map[reflect.Type]bool) map[reflect.Type]bool {
	u := map[reflect.Type]bool{}
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}

// kindName names typ's kind as group/version Kind (core for the core
// group), from its first group version in s.
func kindName(s *runtime.Scheme, typ reflect.Type) (string, bool) {
	if typ.Kind() != reflect.Pointer {
		return "", false
	}
	obj, ok := reflect.New(typ.Elem()).Interface().(runtime.Object)
	if !ok {
		return "", false
	}
	gvks, _, err := s.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return "", false
	}
	return KindName(gvks[0]), true
}

func seedOf(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

func panicked(f func()) (p bool) {
	defer func() {
		if recover() != nil {
			p = true
		}
	}()
	f()
	return false
}

// taintTimeComparer compares the times device taints are stamped with when
// they have none: kube and vapkit both take the clock, truncated to the
// second, so two defaultings a moment apart may straddle a second.
var taintTimeComparer = cmp.FilterPath(func(p cmp.Path) bool {
	f, ok := p.Last().(cmp.StructField)
	return ok && f.Name() == "TimeAdded"
}, cmp.Comparer(func(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	d := a.Sub(b.Time)
	return d >= -time.Second && d <= time.Second
}))

var quantityComparer = cmp.Comparer(func(a, b resource.Quantity) bool {
	return a.String() == b.String()
})

func describe(obj runtime.Object) string {
	return fmt.Sprintf("%T %+v", obj, obj)
}

func formatReport(report []kindResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-58s %8s %8s %8s %s\n", "kind", "objects", "differ", "kube!", "note")
	var total, differ int
	for _, r := range report {
		note := ""
		switch {
		case r.known == 1:
			note = "known gap (vapkit does not default it yet)"
		case r.kube && !r.vapkit:
			note = "MISSING in vapkit"
		case !r.kube && r.vapkit:
			note = "kube does not default it"
		case r.differ == 0:
			note = "matches"
		}
		fmt.Fprintf(&b, "%-58s %8d %8d %8d %s\n", r.name, r.objects, r.differ, r.kubePanics, note)
		total += r.objects
		differ += r.differ
	}
	fmt.Fprintf(&b, "%d kinds, %d objects, %d differ\n", len(report), total, differ)
	return b.String()
}
