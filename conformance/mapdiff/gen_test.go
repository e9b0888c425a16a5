package mapdiff

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	genStart = flag.Uint64("gen.start", 0, "first generated seed")
	genCount = flag.Uint64("gen.count", 300, "number of generated seeds (the issue's bar is 10,000: -gen.count=10000)")
	genDump  = flag.String("gen.dump", "", "directory to write every generated case to")
)

// TestGeneratedMAPDiff compares vapkit with upstream's mutating dispatcher
// on generated cases: one to three mutating policies (failurePolicy,
// reinvocationPolicy, match conditions, variables) whose apply
// configurations and JSON patches touch labels, annotations, replicas,
// keyed lists, atomic fields and error paths, on typed Deployments and
// ConfigMaps, for CREATE, UPDATE and DELETE. A divergent seed prints its
// case.
func TestGeneratedMAPDiff(t *testing.T) {
	if testing.Short() {
		*genCount = min(*genCount, 50)
	}
	divergences := 0
	for seed := *genStart; seed < *genStart+*genCount; seed++ {
		text := generateMAPCase(seed)
		name := fmt.Sprintf("seed-%d", seed)
		if *genDump != "" {
			if err := os.WriteFile(filepath.Join(*genDump, name+".yaml"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c := parseCaseText(t, name, []byte(text))
		up := normalize(t, runUpstream(t, c))
		ours := normalize(t, runVapkit(t, c))
		if diff := cmp.Diff(up, ours); diff != "" {
			divergences++
			t.Errorf("%s diverges (-upstream +vapkit):\n%s\ncase:\n%s", name, diff, text)
			if divergences > 5 {
				t.Fatal("too many divergences")
			}
		}
	}
	t.Logf("seeds %d..%d: %d divergences", *genStart, *genStart+*genCount-1, divergences)
}

// mapGen draws the parts of one case.
type mapGen struct{ r *rand.Rand }

func (g mapGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }
func (g mapGen) chance(p float64) bool    { return g.r.Float64() < p }

const cont = "Object.spec.template.spec.containers"

func (g mapGen) key() string { return g.pick("a", "b", "z", "team", "app") }

func (g mapGen) applyExpr(kind string) string {
	labels := fmt.Sprintf(`Object{metadata: Object.metadata{labels: {"%s": "%s"}}}`, g.key(), g.pick("1", "2", "x"))
	common := []string{
		labels,
		fmt.Sprintf(`Object{metadata: Object.metadata{annotations: {"%s": string(size(object.metadata.labels))}}}`, g.key()),
		fmt.Sprintf(`Object{metadata: Object.metadata{labels: {"%s": "z" in object.metadata.labels ? "seen" : "unseen"}}}`, g.key()),
		`Object{metadata: Object.metadata{labels: null}}`,
		`Object{metadata: Object.metadata{labelz: {"a": "b"}}}`,
		`Object{metadata: Object.metadatax{labels: {"a": "b"}}}`,
		`Object{metadata: Object.metadata{finalizers: ["example.com/f"]}}`,
		`Object{metadata: Object.metadata{labels: {"v": variables.count}}}`,
	}
	if kind == "configmap" {
		common = append(common, fmt.Sprintf(`Object{data: {"%s": "v"}}`, g.key()), `Object{data: {"n": 1}}`, `Object{immutable: true}`)
		return g.pick(common...)
	}
	common = append(common,
		fmt.Sprintf(`Object{spec: Object.spec{replicas: %d}}`, g.r.IntN(5)),
		fmt.Sprintf(`Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: [%s{name: "%s", image: "%s"}]}}}}`, cont, g.pick("nginx", "sidecar"), g.pick("nginx:2", "envoy")),
		fmt.Sprintf(`Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: [%s{name: "nginx", env: [%s.env{name: "%s", value: "v"}]}]}}}}`, cont, cont, g.pick("A", "B")),
		fmt.Sprintf(`Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: [%s{name: "nginx", ports: [%s.ports{containerPort: %s}]}]}}}}`, cont, cont, g.pick("80", "8080")),
		`Object{spec: Object.spec{selector: Object.spec.selector{matchLabels: {"app": "web"}}}}`,
		`Object{spec: Object.spec{replicas: "3"}}`,
		`Object{spec: Object.spec{paused: object.spec.replicas > 1}}`,
	)
	return g.pick(common...)
}

func (g mapGen) jsonExpr(kind string) string {
	ops := []string{
		fmt.Sprintf(`JSONPatch{op: "add", path: "/metadata/labels/%s", value: "%s"}`, g.key(), g.pick("1", "2")),
		fmt.Sprintf(`JSONPatch{op: "remove", path: "/metadata/labels/%s"}`, g.key()),
		fmt.Sprintf(`JSONPatch{op: "replace", path: "/metadata/labels/%s", value: "r"}`, g.key()),
		fmt.Sprintf(`JSONPatch{op: "test", path: "/metadata/labels/app", value: "%s"}`, g.pick("web", "other")),
		`JSONPatch{op: "add", path: "/metadata/annotations/" + jsonpatch.escapeKey("example.com/a~b"), value: "x"}`,
		`JSONPatch{op: "add", path: "/metadata/annotations", value: {"k": "v"}}`,
		`JSONPatch{op: "copy", from: "/metadata/name", path: "/metadata/labels/copied"}`,
		`JSONPatch{op: "move", from: "/metadata/labels/app", path: "/metadata/labels/moved"}`,
		`JSONPatch{op: "bogus", path: "/metadata/labels/a"}`,
	}
	if kind == "configmap" {
		ops = append(ops, `JSONPatch{op: "add", path: "/data/k", value: "v"}`, `JSONPatch{op: "add", path: "/data/n", value: 1}`, `JSONPatch{op: "remove", path: "/data"}`)
	} else {
		ops = append(ops,
			fmt.Sprintf(`JSONPatch{op: "replace", path: "/spec/replicas", value: %s}`, g.pick("3", "0", `"3"`, "2.5", "9007199254740993")),
			`JSONPatch{op: "add", path: "/spec/template/spec/containers/0/env/-", value: {"name": "C", "value": "c"}}`,
			`JSONPatch{op: "replace", path: "/spec/template/spec/containers/-1/image", value: "nginx:3"}`,
			`JSONPatch{op: "add", path: "/spec/paused2", value: true}`,
			`JSONPatch{op: "remove", path: "/spec/strategy"}`,
			`JSONPatch{op: "add", path: "/spec/x/y", value: 1}`,
		)
	}
	n := 1 + g.r.IntN(3)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = g.pick(ops...)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// generateMAPCase returns the YAML of the case of seed.
func generateMAPCase(seed uint64) string {
	g := mapGen{r: rand.New(rand.NewPCG(seed, 0x4d4150))}
	kind := g.pick("deployment", "deployment", "configmap")
	var docs []string
	for i := range 1 + g.r.IntN(3) {
		name := fmt.Sprintf("p%d", i)
		var extra string
		if g.chance(0.3) {
			extra += "  matchConditions:\n  - {name: mc, expression: " + quote(g.pick("true", "false", "'app' in object.metadata.labels",
				"has(object.metadata.labels.z)", "object.spec.nope == 1", "!('a' in object.metadata.labels)")) + "}\n"
		}
		if g.chance(0.3) {
			extra += "  variables:\n  - {name: count, expression: \"string(size(object.metadata.labels))\"}\n"
		}
		var muts [][2]string
		for range 1 + g.r.IntN(3) {
			if g.chance(0.5) {
				muts = append(muts, [2]string{"apply", g.applyExpr(kind)})
			} else {
				muts = append(muts, [2]string{"json", g.jsonExpr(kind)})
			}
		}
		docs = append(docs, mapYAML(name, kind, g.pick("Fail", "Ignore"), g.pick("Never", "IfNeeded"), extra, muts), mapBindingYAML(name))
	}
	op := g.pick("CREATE", "CREATE", "UPDATE", "DELETE")
	docs = append(docs, "apiVersion: v1\nkind: Namespace\nmetadata: {name: prod, labels: {env: prod}}\n", reviewYAML(kind, op))
	return strings.Join(docs, "---\n")
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

func mapYAML(name, kind, fp, reinv, extra string, muts [][2]string) string {
	group, resource := `"apps"`, "deployments"
	if kind == "configmap" {
		group, resource = `""`, "configmaps"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicy\nmetadata: {name: %s}\nspec:\n", name)
	fmt.Fprintf(&b, "  failurePolicy: %s\n  reinvocationPolicy: %s\n", fp, reinv)
	fmt.Fprintf(&b, "  matchConstraints:\n    resourceRules:\n    - {apiGroups: [%s], apiVersions: [\"v1\"], operations: [\"*\"], resources: [\"%s\"]}\n", group, resource)
	b.WriteString(extra)
	b.WriteString("  mutations:\n")
	for _, m := range muts {
		if m[0] == "apply" {
			fmt.Fprintf(&b, "  - patchType: ApplyConfiguration\n    applyConfiguration: {expression: %s}\n", quote(m[1]))
		} else {
			fmt.Fprintf(&b, "  - patchType: JSONPatch\n    jsonPatch: {expression: %s}\n", quote(m[1]))
		}
	}
	return b.String()
}

func mapBindingYAML(name string) string {
	return fmt.Sprintf("apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicyBinding\nmetadata: {name: %s-binding}\nspec: {policyName: %s}\n", name, name)
}

func reviewYAML(kind, op string) string {
	obj := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"prod","labels":{"app":"web"}},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},"strategy":{"type":"RollingUpdate"},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.14.2","ports":[{"containerPort":80,"protocol":"TCP"}],"env":[{"name":"A","value":"a"}]}]}}}}`
	k, r := `{"group":"apps","version":"v1","kind":"Deployment"}`, `{"group":"apps","version":"v1","resource":"deployments"}`
	name := "web"
	if kind == "configmap" {
		obj = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"prod","labels":{"app":"web"}},"data":{"a":"b"}}`
		k, r, name = `{"group":"","version":"v1","kind":"ConfigMap"}`, `{"group":"","version":"v1","resource":"configmaps"}`, "cm"
	}
	objects := `"object":` + obj
	switch op {
	case "UPDATE":
		objects += `,"oldObject":` + obj
	case "DELETE":
		objects = `"oldObject":` + obj
	}
	return fmt.Sprintf("apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest: {\"uid\":\"u\",\"kind\":%s,\"resource\":%s,\"name\":%q,\"namespace\":\"prod\",\"operation\":%q,\"userInfo\":{\"username\":\"alice\"},%s}\n", k, r, name, op, objects)
}
