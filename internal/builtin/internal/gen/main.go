// Command gen writes zz_generated_resources.go, the table of built-in
// resources that package builtin serves from.
//
// It reads the k8s.io/api module source that go.mod selects (located with
// `go list -m -json k8s.io/api`, so no network is needed once the module is in
// the module cache) and derives one row per top-level resource:
//
//   - a type is a top-level resource when its comments carry a `+genclient`
//     marker and no `+genclient:noVerbs` (Eviction and ImageReview are not
//     served as resources of their own);
//   - `+genclient:nonNamespaced` makes it cluster-scoped;
//   - the plural comes from meta.UnsafeGuessKindToResource, corrected by
//     pluralExceptions;
//   - subresources come from `+genclient:method=...,subresource=...`
//     markers, `+k8s:supportsSubresource` markers and a `status` field
//     (create-only resources such as TokenReview have no subresources), plus
//     the hand-maintained extraSubresources for REST-only subresources that
//     no marker describes (pods/exec, nodes/proxy, ...).
//
// Run it through `go generate` in the builtin package directory.
package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// pluralExceptions holds the kinds whose plural the guesser gets wrong.
var pluralExceptions = map[string]string{
	"Endpoints": "endpoints",
}

type subresource struct {
	name string
	kind schema.GroupVersionKind
}

type resource struct {
	gvk         schema.GroupVersionKind
	plural      string
	namespaced  bool
	subresource []subresource
}

// extraSubresources lists subresources that exist in a kube-apiserver but are
// not described by any marker in k8s.io/api. The kinds are the ones the
// apiserver registers for them (the object its REST storage returns from
// New, or the kind it reports through GroupVersionKindProvider).
func extraSubresources() map[schema.GroupVersionResource][]subresource {
	core := func(kind string) schema.GroupVersionKind { return schema.GroupVersionKind{Version: "v1", Kind: kind} }
	return map[schema.GroupVersionResource][]subresource{
		{Version: "v1", Resource: "pods"}: {
			{"attach", core("PodAttachOptions")},
			{"binding", core("Binding")},
			{"eviction", schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"}},
			{"exec", core("PodExecOptions")},
			{"log", core("Pod")},
			{"portforward", core("PodPortForwardOptions")},
			{"proxy", core("PodProxyOptions")},
		},
		{Version: "v1", Resource: "nodes"}:      {{"proxy", core("NodeProxyOptions")}},
		{Version: "v1", Resource: "services"}:   {{"proxy", core("ServiceProxyOptions")}},
		{Version: "v1", Resource: "namespaces"}: {{"finalize", core("Namespace")}},
	}
}

// extraResources lists resources a kube-apiserver serves that have no
// `+genclient` type in k8s.io/api: core bindings (create-only), and the
// resources of the apiextensions and aggregator servers, whose Go types live
// outside k8s.io/api.
func extraResources() []resource {
	return []resource{
		{gvk: schema.GroupVersionKind{Version: "v1", Kind: "Binding"}, plural: "bindings", namespaced: true},
		{
			gvk:         schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
			plural:      "customresourcedefinitions",
			subresource: []subresource{{"status", schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}}},
		},
		{
			gvk:         schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"},
			plural:      "apiservices",
			subresource: []subresource{{"status", schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}}},
		},
	}
}

func main() {
	out := flag("-o", "zz_generated_resources.go")
	if err := run(out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// flag returns the value following name in os.Args, or def.
func flag(name, def string) string {
	for i, a := range os.Args[1:] {
		if a == name && i+2 < len(os.Args) {
			return os.Args[i+2]
		}
	}
	return def
}

func run(out string) error {
	dir, version, err := apiModule()
	if err != nil {
		return err
	}
	res, err := scan(dir)
	if err != nil {
		return err
	}
	res = append(res, extraResources()...)
	extras := extraSubresources()
	for i := range res {
		gvr := res[i].gvk.GroupVersion().WithResource(res[i].plural)
		// Hand-written kinds win over marker-derived ones: the stable sort
		// keeps them first and CompactFunc keeps the first of each name.
		res[i].subresource = append(slices.Clone(extras[gvr]), res[i].subresource...)
		slices.SortStableFunc(res[i].subresource, func(a, b subresource) int { return strings.Compare(a.name, b.name) })
		res[i].subresource = slices.CompactFunc(res[i].subresource, func(a, b subresource) bool { return a.name == b.name })
	}
	slices.SortFunc(res, func(a, b resource) int {
		return cmp.Or(strings.Compare(a.gvk.Group, b.gvk.Group), strings.Compare(a.gvk.Version, b.gvk.Version),
			strings.Compare(a.plural, b.plural))
	})
	for i := 1; i < len(res); i++ {
		if res[i].gvk.GroupVersion() == res[i-1].gvk.GroupVersion() && res[i].plural == res[i-1].plural {
			return fmt.Errorf("duplicate resource %s/%s", res[i].gvk.GroupVersion(), res[i].plural)
		}
	}
	src, err := render(res, version)
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}

// apiModule returns the source directory and version of k8s.io/api as the
// enclosing module selects it.
func apiModule() (string, string, error) {
	cmd := exec.Command("go", "list", "-m", "-json", "k8s.io/api")
	cmd.Env = append(os.Environ(), "GOPROXY=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("go list -m k8s.io/api: %v: %s", err, stderr.String())
	}
	var m struct{ Dir, Version string }
	if err := json.Unmarshal(b, &m); err != nil {
		return "", "", fmt.Errorf("decoding go list output: %v", err)
	}
	if m.Dir == "" {
		return "", "", errors.New("k8s.io/api is not in the module cache; run `go mod download k8s.io/api`")
	}
	return m.Dir, m.Version, nil
}

var groupNameRE = regexp.MustCompile(`(?m)^const GroupName = ("[^"]*")`)

// scan walks every <group>/<version>/types.go under the module directory.
func scan(dir string) ([]resource, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*", "types.go"))
	if err != nil {
		return nil, err
	}
	groups := map[string]string{} // "<dir>/<version>" -> API group
	var pkgs []string
	for _, f := range files {
		pkgDir := filepath.Dir(f)
		reg, err := os.ReadFile(filepath.Join(pkgDir, "register.go"))
		if err != nil {
			continue // not an API group version (no scheme registration)
		}
		m := groupNameRE.FindSubmatch(reg)
		if m == nil {
			return nil, fmt.Errorf("%s: no GroupName constant", pkgDir)
		}
		group, err := strconv.Unquote(string(m[1]))
		if err != nil {
			return nil, err
		}
		rel := filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(pkgDir)), filepath.Base(pkgDir)))
		groups[rel] = group
		pkgs = append(pkgs, rel)
	}
	var all []resource
	for _, rel := range pkgs {
		gv := schema.GroupVersion{Group: groups[rel], Version: path.Base(rel)}
		res, err := scanFile(filepath.Join(dir, filepath.FromSlash(rel), "types.go"), gv, groups)
		if err != nil {
			return nil, err
		}
		all = append(all, res...)
	}
	return all, nil
}

var (
	methodRE   = regexp.MustCompile(`^\+genclient:method=(.*)$`)
	supportsRE = regexp.MustCompile(`^\+k8s:supportsSubresource="/([a-z]+)"$`)
)

func scanFile(file string, gv schema.GroupVersion, groups map[string]string) ([]resource, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	// Group versions that declare their own Scale type (apps/v1beta1,
	// apps/v1beta2, extensions/v1beta1) serve it from /scale; the others
	// serve autoscaling/v1 Scale.
	scaleKind := schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
	if f.Scope.Lookup("Scale") != nil {
		scaleKind = gv.WithKind("Scale")
	}
	var out []resource
	prev := f.Package
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		start := decl.Pos()
		markers := commentLines(f.Comments, prev, start)
		prev = decl.End()
		if !ok || gd.Tok != token.TYPE || len(gd.Specs) != 1 {
			continue
		}
		ts := gd.Specs[0].(*ast.TypeSpec)
		st, ok := ts.Type.(*ast.StructType)
		if !ok || !slices.Contains(markers, "+genclient") || slices.Contains(markers, "+genclient:noVerbs") {
			continue
		}
		r := resource{gvk: gv.WithKind(ts.Name.Name), namespaced: !slices.Contains(markers, "+genclient:nonNamespaced")}
		r.plural = pluralExceptions[r.gvk.Kind]
		if r.plural == "" {
			plural, _ := meta.UnsafeGuessKindToResource(r.gvk)
			r.plural = plural.Resource
		}
		createOnly := slices.Contains(markers, "+genclient:onlyVerbs=create")
		if !createOnly {
			r.subresource, err = subresources(markers, st, r.gvk, scaleKind, groups)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %v", file, r.gvk.Kind, err)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// commentLines returns the trimmed comment lines of every comment group
// between from and to.
func commentLines(groups []*ast.CommentGroup, from, to token.Pos) []string {
	var lines []string
	for _, g := range groups {
		if g.Pos() < from || g.End() > to {
			continue
		}
		for _, c := range g.List {
			lines = append(lines, strings.TrimSpace(strings.TrimPrefix(c.Text, "//")))
		}
	}
	return lines
}

func subresources(markers []string, st *ast.StructType, self, scaleKind schema.GroupVersionKind, groups map[string]string) ([]subresource, error) {
	var subs []subresource
	add := func(name string, kind schema.GroupVersionKind) {
		for _, s := range subs {
			if s.name == name {
				return
			}
		}
		subs = append(subs, subresource{name, kind})
	}
	for _, m := range markers {
		mm := methodRE.FindStringSubmatch(m)
		if mm == nil {
			continue
		}
		var name, result string
		for kv := range strings.SplitSeq(mm[1], ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "subresource":
				name = v
			case "result":
				result = v
			}
		}
		if name == "" {
			continue
		}
		kind, err := resultKind(result, self, groups)
		if err != nil {
			return nil, err
		}
		add(name, kind)
	}
	for _, m := range markers {
		// "/status" markers are not trusted: declarative validation puts
		// them on types whose REST storage has no status subresource
		// (CSINode); the status field below decides instead.
		if sm := supportsRE.FindStringSubmatch(m); sm != nil && sm[1] != "status" {
			switch sm[1] {
			case "scale":
				add("scale", scaleKind)
			default:
				add(sm[1], self)
			}
		}
	}
	if hasStatusField(st) {
		add("status", self)
	}
	return subs, nil
}

// resultKind turns a genclient result type (empty, a local type name, or
// k8s.io/api/<dir>/<version>.Kind) into a kind; groups maps
// "<dir>/<version>" to the API group of that package.
func resultKind(result string, self schema.GroupVersionKind, groups map[string]string) (schema.GroupVersionKind, error) {
	if result == "" {
		return self, nil
	}
	dot := strings.LastIndex(result, ".")
	if dot < 0 {
		return self.GroupVersion().WithKind(result), nil
	}
	pkg, kind := strings.TrimPrefix(result[:dot], "k8s.io/api/"), result[dot+1:]
	group, ok := groups[pkg]
	if !ok {
		return schema.GroupVersionKind{}, fmt.Errorf("unknown package of result type %q", result)
	}
	return schema.GroupVersionKind{Group: group, Version: path.Base(pkg), Kind: kind}, nil
}

func hasStatusField(st *ast.StructType) bool {
	for _, f := range st.Fields.List {
		if f.Tag == nil {
			continue
		}
		tag, err := strconv.Unquote(f.Tag.Value)
		if err != nil {
			continue
		}
		name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
		if name == "status" {
			return true
		}
	}
	return false
}

func render(res []resource, version string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by internal/gen from k8s.io/api %s; DO NOT EDIT.\n\n", version)
	b.WriteString("package builtin\n\nimport \"k8s.io/apimachinery/pkg/runtime/schema\"\n\n")
	b.WriteString("// generatedResources returns a fresh copy of the built-in resource table,\n")
	b.WriteString("// sorted by group, version and plural.\n")
	b.WriteString("func generatedResources() []Resource {\n\treturn []Resource{\n")
	for _, r := range res {
		fmt.Fprintf(&b, "\t\t{Group: %q, Version: %q, Kind: %q, Plural: %q, Namespaced: %t",
			r.gvk.Group, r.gvk.Version, r.gvk.Kind, r.plural, r.namespaced)
		if len(r.subresource) > 0 {
			b.WriteString(", Subresources: []Subresource{\n")
			for _, s := range r.subresource {
				fmt.Fprintf(&b, "\t\t\t{Name: %q, Kind: schema.GroupVersionKind{Group: %q, Version: %q, Kind: %q}},\n",
					s.name, s.kind.Group, s.kind.Version, s.kind.Kind)
			}
			b.WriteString("\t\t}")
		}
		b.WriteString("},\n")
	}
	b.WriteString("\t}\n}\n")
	return format.Source(b.Bytes())
}
