//go:build vapkit_costcheck

package policy_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vapkit/vapkit/internal/costcheck"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/casefile"
)

// The tests of this file check measured costs against the estimated bounds
// that let expressions run untracked. They need the vapkit_costcheck build
// tag (go test -tags vapkit_costcheck ./policy), which CI sets.

// TestCostBounds evaluates every case with cost tracking and checks each
// measured cost against the estimated bound that would have let the
// expression run untracked: an estimate below a measurement would let an
// untracked evaluation miss a limit the API server enforces.
func TestCostBounds(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "cases", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	disable := costcheck.Enable()
	defer disable()
	costcheck.Take()
	before := costcheck.Checked()
	for _, f := range files {
		if slowCase(strings.TrimSuffix(filepath.Base(f), ".yaml")) != "" {
			continue
		}
		c, err := casefile.ParseFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := c.Review(t.Context()); err != nil {
			t.Fatalf("%s: Review() error = %v", f, err)
		}
		for _, v := range costcheck.Take() {
			t.Errorf("%s: %v", strings.TrimSuffix(filepath.Base(f), ".yaml"), v)
		}
	}
	if n := costcheck.Checked() - before; n < 100 {
		t.Errorf("only %d measured costs had a bound to check", n)
	}
}

// TestCostBoundsLongInputs checks the bounds of functions whose charge
// grows with the length of every element they traverse, on inputs with
// many long strings: a bound that counted one per element, or sized a dyn
// list's elements as empty, would be below the measured cost.
func TestCostBoundsLongInputs(t *testing.T) {
	var finalizers []string
	for i := range 60 {
		finalizers = append(finalizers, fmt.Sprintf("e.io/%02d%s", i, strings.Repeat("x", 58)))
	}
	// Label values the API server accepts: at most 63 characters, no
	// commas (data keeps its own).
	long := strings.Repeat("ab.", 19) + "ab"
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "long", Namespace: "default", Finalizers: finalizers,
			Labels: map[string]string{"a": long, "b": long}},
		Data: map[string]string{"csv": strings.Repeat("ab,", 20), "other": strings.Repeat("y", 60)},
	}
	exprs := []string{
		"object.metadata.finalizers.isSorted()",
		"object.metadata.finalizers.indexOf('zz') < 0",
		"object.metadata.finalizers.lastIndexOf('zz') < 0",
		"object.metadata.finalizers.max() != 'a'",
		"object.metadata.finalizers.min() != 'a'",
		"object.metadata.finalizers.join(',') != 'a'",
		"object.metadata.finalizers.join() != 'a'",
		"object.metadata.finalizers.map(f, f + f).join('--') != 'a'",
		"object.metadata.finalizers.sort()[0] != 'a'",
		"object.metadata.finalizers.distinct().size() > 0",
		"object.data.csv.split(',').join(object.data.other) != ''",
		"object.data.csv.split(',').isSorted() || true",
		"object.data.csv.indexOf('zz') < 0",
		"object.data.csv.replace(',', object.data.other).size() > 0",
		"object.data.csv.findAll('[a-z]+').size() > 0",
		"object.metadata.labels.all(k, object.metadata.labels[k].split('.').size() > 1)",
		"[object.metadata.finalizers, object.metadata.finalizers].map(l, l.join(',')).join(',') != ''",
		"sets.contains(object.metadata.finalizers, object.metadata.finalizers)",
		"!object.metadata.finalizers.exists(f, f.lowerAscii().upperAscii().startsWith(object.data.other))",
		"'%s'.format([object.metadata.finalizers]) != ''",
		"'%s %s'.format([object.metadata.labels, object.data]) != ''",
		"object.metadata.finalizers != object.metadata.labels.a.split('.')",
		"object.metadata.finalizers + object.metadata.finalizers != []",
		"object.metadata.finalizers.slice(0, 2).size() == 2",
		"[object.metadata.finalizers, object.metadata.finalizers].flatten().size() > 0",
		"object.metadata.finalizers.reverse().size() > 0",
		"strings.quote(object.data.csv) != ''",
		"object.data.csv.lastIndexOf(',') > 0",
		"object.metadata.finalizers.all(f, f in object.metadata.finalizers)",
		"object.metadata.finalizers.exists_one(f, f == object.data.other) || true",
		"object.metadata.finalizers.map(f, f.size()).sum() > 0",
		"object.metadata.finalizers.sortBy(f, f + f).size() > 0",
		"object.metadata.labels.transformMap(k, v, v + v).size() > 0",
		"object.metadata.labels.transformList(k, v, k + v).join(',') != ''",
		"object.metadata.finalizers.map(f, [f, f]).flatten().join(',') != ''",
		"object.metadata.finalizers.map(f, f.split('x')).flatten().size() > 0",
		"object.metadata.finalizers.map(f, {f: f}).size() > 0",
		"!sets.intersects(object.metadata.finalizers, object.metadata.labels.a.split('.'))",
		"sets.equivalent(object.metadata.finalizers, object.metadata.finalizers)",
	}
	disable := costcheck.Enable()
	defer disable()
	costcheck.Take()
	before := costcheck.Checked()
	for _, expr := range exprs {
		d := evaluateConfigMapCreate(t, fmt.Sprintf("  validations:\n  - expression: %q\n", expr), cm, policy.Options{})
		if !d.Allowed {
			t.Errorf("%s: denied: %v", expr, d.Status.Message)
		}
		for _, v := range costcheck.Take() {
			t.Errorf("%s: %v", expr, v)
		}
	}
	// Most of them are bounded, and each bound was checked.
	if n := costcheck.Checked() - before; n < int64(len(exprs)/2) {
		t.Errorf("only %d of %d expressions had a bound to check", n, len(exprs))
	}
}

// checkBounds runs evaluate with costcheck on and reports every measured
// cost above its bound.
func checkBounds(t *testing.T, evaluate func()) {
	t.Helper()
	disable := costcheck.Enable()
	costcheck.Take()
	evaluate()
	disable()
	for _, v := range costcheck.Take() {
		t.Errorf("cost bound violated: %v", v)
	}
}
