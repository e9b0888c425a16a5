package celdiff

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/vapkit/vapkit/celenv"
)

// outcome is what one expression evaluation produced, rendered so that the
// two implementations' values (whose Go types differ for the Kubernetes
// library types) compare by CEL type and content.
type outcome struct {
	Value string
	Err   string
	Cost  int64
}

func (o outcome) String() string {
	if o.Err != "" {
		return fmt.Sprintf("error %q (cost %d)", o.Err, o.Cost)
	}
	return fmt.Sprintf("%s (cost %d)", o.Value, o.Cost)
}

// render formats a CEL value as "<type>(<content>)", recursing into lists
// and maps (map entries sorted by rendered key) and converting other values
// to string where the type allows it.
func render(v ref.Val) string {
	if v == nil {
		return "<nil>"
	}
	name := v.Type().TypeName()
	switch x := v.(type) {
	case traits.Lister:
		var parts []string
		for it := x.Iterator(); it.HasNext() == types.True; {
			parts = append(parts, render(it.Next()))
		}
		return name + "[" + strings.Join(parts, ", ") + "]"
	case traits.Mapper:
		var parts []string
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			parts = append(parts, render(k)+": "+render(x.Get(k)))
		}
		sort.Strings(parts)
		return name + "{" + strings.Join(parts, ", ") + "}"
	case *types.Optional:
		if !x.HasValue() {
			return "optional.none()"
		}
		return "optional.of(" + render(x.GetValue()) + ")"
	}
	switch v.Type() {
	case types.BoolType, types.IntType, types.UintType, types.DoubleType, types.StringType,
		types.BytesType, types.NullType, types.DurationType, types.TimestampType:
		return fmt.Sprintf("%s(%v)", name, v.Value())
	}
	if s := v.ConvertToType(types.StringType); !types.IsError(s) {
		return fmt.Sprintf("%s(%v)", name, s.Value())
	}
	return fmt.Sprintf("%s(%v)", name, v.Value())
}

type accessor string

func (a accessor) GetExpression() string    { return string(a) }
func (a accessor) ReturnTypes() []*cel.Type { return []*cel.Type{cel.AnyType} }

// upstreamRunner evaluates expressions with the API server's admission CEL
// compiler, as a server of the given version evaluates stored policies.
type upstreamRunner struct {
	compiler plugincel.ConditionCompiler
	mode     environment.Type
}

func newUpstreamRunner(v celenv.Version) *upstreamRunner {
	// A 1.37 binary's stored environment is a server of 1.37's; for older
	// servers, the environment that offers what was introduced by then and
	// not removed yet is the 1.37 binary's new-expressions environment at
	// that compatibility version.
	set := environment.MustBaseEnvSet(version.MajorMinor(1, uint(v)))
	mode := environment.NewExpressions
	if v == celenv.MaxVersion {
		mode = environment.StoredExpressions
	}
	return &upstreamRunner{compiler: plugincel.NewConditionCompiler(set), mode: mode}
}

func (r *upstreamRunner) eval(t *testing.T, expr string, obj map[string]any) outcome {
	t.Helper()
	return r.evalWith(expr, obj, false)
}

// evalWith evaluates expr on a CREATE of obj (a Widget named w in default,
// by alice), with the authorizer variable when authz is set.
func (r *upstreamRunner) evalWith(expr string, obj map[string]any, authz bool) outcome {
	decls := plugincel.OptionalVariableDeclarations{HasAuthorizer: authz}
	var bindings plugincel.OptionalVariableBindings
	if authz {
		bindings.Authorizer = upstreamAuthorizer()
	}
	eval := r.compiler.CompileCondition([]plugincel.ExpressionAccessor{accessor(expr)}, decls, r.mode)
	u := &unstructured.Unstructured{Object: obj}
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	attr := admission.NewAttributesRecord(u, nil, gvk, "default", "w", gvr, "", admission.Create, nil, false, &user.DefaultInfo{Name: "alice"})
	va := &admission.VersionedAttributes{Attributes: attr, VersionedObject: admission.NewLazyObject(u), VersionedKind: gvk}
	req := plugincel.CreateAdmissionRequest(attr, metaGVR(gvr), metaGVK(gvk))
	results, remaining, err := eval.ForInput(context.Background(), va, req, bindings, nil, runtimeBudget)
	if err != nil {
		return outcome{Err: "batch: " + err.Error()}
	}
	o := outcome{Cost: runtimeBudget - remaining}
	if results[0].Error != nil {
		o.Err = results[0].Error.Error()
	} else {
		o.Value = render(results[0].EvalResult)
	}
	return o
}

// vapkitRunner evaluates expressions with vapkit's stored environment.
type vapkitRunner struct {
	env *celenv.Env
}

func newVapkitRunner(t *testing.T, v celenv.Version) *vapkitRunner {
	t.Helper()
	env, err := celenv.New(celenv.Options{Version: v})
	if err != nil {
		t.Fatalf("celenv.New(%s) error: %v", v, err)
	}
	return &vapkitRunner{env: env}
}

func (r *vapkitRunner) eval(expr string, obj map[string]any) outcome {
	scope := r.env.NewScope(celenv.ScopeOptions{})
	p := scope.Compile(expr, celenv.Decls{})
	batch := scope.NewBatch(context.Background(), nil, &celenv.Input{Object: obj}, runtimeBudget)
	res, err := batch.Eval(p)
	if err != nil {
		return outcome{Err: "batch: " + err.Error()}
	}
	o := outcome{Cost: res.Cost}
	if res.Err != nil {
		o.Err = res.Err.Error()
	} else {
		o.Value = render(res.Value)
	}
	return o
}

// testObject is bound to `object`; the expressions read inputs from it so
// that they are not constant-folded away.
func testObject() map[string]any {
	long := make([]any, 0, 200)
	for i := 0; i < 200; i++ {
		long = append(long, fmt.Sprintf("item-%03d", i))
	}
	return map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata": map[string]any{
			"name":      "w",
			"namespace": "default",
			"labels":    map[string]any{"app": "web", "tier": "front"},
		},
		"spec": map[string]any{
			"ints":      []any{int64(3), int64(1), int64(2)},
			"sorted":    []any{int64(1), int64(2), int64(2), int64(5)},
			"doubles":   []any{1.5, 2.25},
			"strs":      []any{"b", "a", "c"},
			"empty":     []any{},
			"long":      long,
			"nested":    []any{[]any{int64(1), int64(2)}, []any{int64(3)}},
			"deep":      []any{[]any{int64(1), []any{int64(2), []any{int64(3)}}}, int64(4)},
			"quantity":  "1.5Gi",
			"ip4":       "192.168.1.10",
			"ip6":       "2001:db8::1",
			"cidr":      "10.0.0.0/8",
			"url":       "https://user@example.com:8443/a%20b/c?x=1&y=2",
			"version":   "1.2.3-rc.1+build",
			"text":      "Hello, World! Hello again.",
			"name":      "my-app",
			"bigString": strings.Repeat("ab", 5000),
			"replicas":  int64(3),
		},
	}
}

// libraryCases are run through both implementations. Every Kubernetes
// library function and every cel-go extension function with a Kubernetes
// call cost appears with typical and edge inputs.
var libraryCases = []string{
	// URLs
	`url(object.spec.url).getScheme()`,
	`url(object.spec.url).getHost()`,
	`url(object.spec.url).getHostname()`,
	`url(object.spec.url).getPort()`,
	`url(object.spec.url).getEscapedPath()`,
	`url(object.spec.url).getQuery()`,
	`url('https://[::1]:80/').getHostname()`,
	`url('/relative/path').getHost()`,
	`isURL(object.spec.url)`,
	`isURL('not a url')`,
	`isURL('')`,
	`url('not a url')`,
	`url(object.spec.url) == url(object.spec.url)`,
	`url(object.spec.url)`,
	// Regex
	`object.spec.text.find('[A-Z][a-z]+')`,
	`object.spec.text.findAll('[A-Z][a-z]+')`,
	`object.spec.text.findAll('l+', 2)`,
	`object.spec.text.findAll('l+', -1)`,
	`object.spec.text.find('zzz')`,
	`object.spec.text.find(object.spec.name + '[')`,
	`object.spec.bigString.find('(ab)+b$')`,
	`object.spec.text.matches('^Hello')`,
	// Lists (Kubernetes)
	`object.spec.ints.isSorted()`,
	`object.spec.sorted.isSorted()`,
	`object.spec.strs.isSorted()`,
	`object.spec.ints.sum()`,
	`object.spec.doubles.sum()`,
	`object.spec.ints.min()`,
	`object.spec.ints.max()`,
	`object.spec.strs.max()`,
	`object.spec.empty.min()`,
	`object.spec.empty.sum()`,
	`object.spec.sorted.indexOf(2)`,
	`object.spec.sorted.lastIndexOf(2)`,
	`object.spec.sorted.indexOf(9)`,
	`object.spec.long.indexOf('item-150')`,
	`object.spec.long.lastIndexOf('item-000')`,
	`object.spec.long.isSorted()`,
	`object.spec.strs.includes('a')`,
	`object.spec.nested.includes([3])`,
	`object.spec.name.includes('my-app')`,
	`[1, 2, 3].sum() == 6`,
	`[duration('1s'), duration('2s')].sum()`,
	`[[1], [2]].min()`,
	// Quantity
	`quantity(object.spec.quantity).asApproximateFloat()`,
	`quantity(object.spec.quantity).asInteger()`,
	`quantity(object.spec.quantity).isInteger()`,
	`quantity('1.5').isInteger()`,
	`quantity('1.5').asInteger()`,
	`quantity('100000000000000000000').asInteger()`,
	`sign(quantity(object.spec.quantity))`,
	`sign(quantity('-1m'))`,
	`sign(quantity('0'))`,
	`quantity(object.spec.quantity).isGreaterThan(quantity('1Gi'))`,
	`quantity(object.spec.quantity).isLessThan(quantity('2Gi'))`,
	`quantity(object.spec.quantity).compareTo(quantity('1536Mi'))`,
	`quantity(object.spec.quantity).add(quantity('512Mi'))`,
	`quantity(object.spec.quantity).add(1)`,
	`quantity(object.spec.quantity).sub(quantity('512Mi'))`,
	`quantity(object.spec.quantity).sub(1)`,
	`quantity(object.spec.quantity) == quantity('1536Mi')`,
	`isQuantity(object.spec.quantity)`,
	`isQuantity('1.5.5')`,
	`isQuantity('')`,
	`quantity('abc')`,
	`quantity(object.spec.quantity)`,
	// IP
	`ip(object.spec.ip4).family()`,
	`ip(object.spec.ip6).family()`,
	`ip(object.spec.ip4).isUnspecified()`,
	`ip('::').isUnspecified()`,
	`ip('127.0.0.1').isLoopback()`,
	`ip('ff02::1').isLinkLocalMulticast()`,
	`ip('fe80::1').isLinkLocalUnicast()`,
	`ip(object.spec.ip4).isGlobalUnicast()`,
	`ip.isCanonical(object.spec.ip6)`,
	`ip.isCanonical('2001:DB8::1')`,
	`ip.isCanonical('bad')`,
	`isIP(object.spec.ip4)`,
	`isIP('1.2.3')`,
	`isIP('::ffff:1.2.3.4')`,
	`ip('::ffff:1.2.3.4')`,
	`ip('fe80::1%eth0')`,
	`ip('010.0.0.1')`,
	`string(ip(object.spec.ip6))`,
	`ip(object.spec.ip4) == ip('192.168.1.10')`,
	`ip(object.spec.ip4)`,
	// CIDR
	`cidr(object.spec.cidr).containsIP(object.spec.ip4)`,
	`cidr(object.spec.cidr).containsIP(ip('10.1.2.3'))`,
	`cidr(object.spec.cidr).containsCIDR('10.1.0.0/16')`,
	`cidr(object.spec.cidr).containsCIDR(cidr('11.0.0.0/16'))`,
	`cidr(object.spec.cidr).ip()`,
	`cidr('10.1.2.3/8').masked()`,
	`cidr(object.spec.cidr).prefixLength()`,
	`cidr('2001:db8::/32').containsIP(object.spec.ip6)`,
	`cidr(object.spec.cidr).containsIP('not an ip')`,
	`isCIDR(object.spec.cidr)`,
	`isCIDR('10.0.0.0/33')`,
	`cidr('10.0.0.0/33')`,
	`string(cidr(object.spec.cidr))`,
	`cidr(object.spec.cidr) == cidr('10.0.0.0/8')`,
	// Format
	`format.dns1123Label().validate(object.spec.name)`,
	`format.dns1123Label().validate('Not_Valid')`,
	`format.dns1123Subdomain().validate(object.spec.bigString)`,
	`format.dns1035Label().validate('1abc')`,
	`format.qualifiedName().validate('example.com/name')`,
	`format.dns1123LabelPrefix().validate('my-prefix-')`,
	`format.dns1123SubdomainPrefix().validate('a.b.-')`,
	`format.dns1035LabelPrefix().validate('a-')`,
	`format.labelValue().validate(object.spec.text)`,
	`format.uri().validate(object.spec.url)`,
	`format.uuid().validate('not-a-uuid')`,
	`format.byte().validate('aGVsbG8=')`,
	`format.date().validate('2024-02-30')`,
	`format.datetime().validate('2024-01-01T00:00:00Z')`,
	`format.named('dns1123Label').hasValue()`,
	`format.named('nope').hasValue()`,
	`format.named(object.spec.name)`,
	`format.named('uri').value().validate('')`,
	// Semver
	`semver(object.spec.version).major()`,
	`semver(object.spec.version).minor()`,
	`semver(object.spec.version).patch()`,
	`semver(object.spec.version).isLessThan(semver('1.2.3'))`,
	`semver(object.spec.version).isGreaterThan(semver('1.2.2'))`,
	`semver(object.spec.version).compareTo(semver('1.2.3-rc.1'))`,
	`semver(object.spec.version) == semver('1.2.3-rc.1+other')`,
	`isSemver(object.spec.version)`,
	`isSemver('v1.2')`,
	`isSemver('v1.2', true)`,
	`semver('v1.2', true).minor()`,
	`semver('01.2.3')`,
	`semver('1.2')`,
	`semver(object.spec.version)`,
	// Strings extension
	`object.spec.text.charAt(4)`,
	`object.spec.text.charAt(99)`,
	`object.spec.text.indexOf('o')`,
	`object.spec.text.indexOf('o', 5)`,
	`object.spec.text.lastIndexOf('Hello')`,
	`object.spec.text.lastIndexOf('o', 5)`,
	`object.spec.text.lowerAscii()`,
	`object.spec.text.upperAscii()`,
	`object.spec.text.replace('Hello', 'Bye')`,
	`object.spec.text.replace('l', 'L', 2)`,
	`object.spec.text.split(' ')`,
	`object.spec.text.split('l', 3)`,
	`object.spec.text.substring(7)`,
	`object.spec.text.substring(7, 12)`,
	`object.spec.text.substring(12, 7)`,
	`('  ' + object.spec.name + '  ').trim()`,
	`object.spec.strs.join()`,
	`object.spec.long.join(', ')`,
	`object.spec.bigString.replace('ab', 'abc')`,
	`object.spec.bigString.split('b').size()`,
	`'%s has %d replicas (%.2f)'.format([object.spec.name, object.spec.replicas, 1.5])`,
	`'%x %o %b %e'.format([255, 8, 5, 1234.5])`,
	`'%d'.format(['x'])`,
	`strings.quote(object.spec.text)`,
	// Sets
	`sets.contains(object.spec.strs, ['a', 'c'])`,
	`sets.equivalent(object.spec.ints, [1, 2, 3, 3])`,
	`sets.intersects(object.spec.long, ['item-199', 'x'])`,
	`sets.contains(object.spec.long, object.spec.long)`,
	// Lists extension
	`object.spec.sorted.distinct()`,
	`object.spec.nested.flatten()`,
	`object.spec.deep.flatten(2)`,
	`object.spec.deep.flatten()`,
	`object.spec.deep.flatten(-1)`,
	`lists.range(5)`,
	`object.spec.ints.reverse()`,
	`object.spec.long.slice(10, 15)`,
	`object.spec.ints.slice(2, 1)`,
	`object.spec.ints.sort()`,
	`object.spec.long.reverse().sort()[0]`,
	`object.spec.strs.sortBy(s, s)`,
	`[1, 'a'].sort()`,
	`[dyn(1), dyn('a')].sort()`,
	// Two-variable comprehensions
	`object.spec.ints.all(i, v, v > i)`,
	`object.spec.ints.exists(i, v, v == i)`,
	`object.spec.ints.existsOne(i, v, v == 2)`,
	`object.spec.ints.exists_one(i, v, v == 2)`,
	`object.spec.ints.transformList(i, v, v * i)`,
	`object.spec.ints.transformList(i, v, v > 1, v * i)`,
	`object.metadata.labels.transformMap(k, v, k + '=' + v)`,
	`object.metadata.labels.transformMapEntry(k, v, {v: k})`,
	`object.metadata.labels.all(k, v, k != v)`,
	// Optional types and other language options
	`object.?spec.?missing.orValue('default')`,
	`object.spec.?ints[?5].hasValue()`,
	`object.spec.ints.first()`,
	`object.spec.empty.last()`,
	`optional.of(1).optMap(x, x + 1)`,
	`object.spec.replicas < 3.5 && 2u < object.spec.replicas`,
	`timestamp('2024-01-01T10:00:00Z').getHours()`,
	`has(object.spec.replicas) && !has(object.spec.missing)`,
	// Costs and limits
	`object.spec.long.all(x, x.matches('^item-[0-9]+$'))`,
	`object.spec.long.map(x, object.spec.long.filter(y, y > x).size()).sum()`,
	`lists.range(1000).map(x, lists.range(1000).filter(y, y < x).size()).sum()`,
	`object.spec.bigString.size() + object.spec.bigString.lowerAscii().size()`,
	`object.spec.long.exists(x, x.startsWith('item-199'))`,
	// Errors
	`object.spec.missing`,
	`object.spec.ints[7]`,
	`1 / (object.spec.replicas - 3)`,
	`object.spec.name + 1`,
	`undeclaredFunction(object)`,
	`int('1.5')`,
	`'abc'.matches('[')`,
}

// olderServersDiffer lists the expressions whose result changed in the
// release named: a server older than that answers differently from
// v0.37.2's library at the same compatibility version, and vapkit follows
// the older server (celenv/drift_test.go pins those answers; the policy
// package documentation lists the drift). Below that version a difference
// from v0.37.2 is expected, not a divergence.
var olderServersDiffer = map[string]celenv.Version{
	`cidr(object.spec.cidr).containsCIDR('10.1.0.0/16')`:       celenv.Version1_32,
	`cidr(object.spec.cidr).containsCIDR(cidr('11.0.0.0/16'))`: celenv.Version1_32,
}

// differentialVersions are the Kubernetes versions compared.
var differentialVersions = []celenv.Version{celenv.Version1_30, celenv.Version1_33, celenv.Version1_37}

func TestLibrariesMatchUpstream(t *testing.T) {
	obj := testObject()
	for _, v := range differentialVersions {
		up := newUpstreamRunner(v)
		vk := newVapkitRunner(t, v)
		t.Run(v.String(), func(t *testing.T) {
			for _, expr := range libraryCases {
				t.Run(expr, func(t *testing.T) {
					want := up.eval(t, expr, obj)
					got := vk.eval(expr, obj)
					if since, ok := olderServersDiffer[expr]; ok && v < since && got != want {
						t.Logf("eval(%s) at %s: vapkit = %v follows the %s server, v0.37.2's library = %v (see celenv's drift tests)", expr, v, got, v, want)
						return
					}
					if got != want {
						t.Errorf("eval(%s) at %s\n  vapkit   = %v\n  upstream = %v", expr, v, got, want)
					}
				})
			}
		})
	}
}

func metaGVR(r schema.GroupVersionResource) metav1.GroupVersionResource {
	return metav1.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
}

func metaGVK(k schema.GroupVersionKind) metav1.GroupVersionKind {
	return metav1.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}
}
