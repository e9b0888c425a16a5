// Package metadatadiff compares vapkit's validation of built-in objects'
// metadata (typecheck.ValidateBuiltinMetadata) with kube-apiserver 1.37's
// create path for each kind: the object decoded (defaulted) and converted
// to its internal type through the legacy scheme, its uid and creation
// time filled, its namespace made to match the request's, then the
// kind's registry strategy of k8s.io/kubernetes v1.37.2 (PrepareForCreate,
// then rest.ValidateCreate: the kind's Validate* function of
// pkg/apis/*/validation, the generic metadata check and declarative
// validation), keeping only the errors whose field path is under metadata.
package metadatadiff

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
)

func gv(group, version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

// Pools the generator draws from: valid values of each field, then
// invalid ones after a "|" (owners: after a nil).
var (
	names = []string{
		"web", "web-1", "a", "a.b.c", "1abc", "x.y-z", strings.Repeat("n", 52), strings.Repeat("n", 63), "|",
		"Web", "a_b", "-a", "a-", "a..b", ".", "..", "a/b", "a%b", strings.Repeat("n", 53), strings.Repeat("n", 64),
		strings.Repeat("d.", 126) + "ab", strings.Repeat("d", 254), "web:1", "caf\u00e9",
	}
	generateNames = []string{"web-", "a.", "ok", "|", "Web-", "-x", strings.Repeat("g", 60), "a_b-"}
	namespaces    = []string{"default", "team-a", "|", "Team", "a.b", strings.Repeat("s", 64), "-ns"}
	labelKeys     = []string{"app", "example.com/tier", "k8s.io/" + strings.Repeat("k", 63), "|", "a b", "-x", "Example.COM/x", "x/", "/x", strings.Repeat("k", 64)}
	labelValues   = []string{"", "web", "a.b_c", strings.Repeat("v", 63), "|", "a b", "-web", "web-", strings.Repeat("v", 64), "\u00e9"}
	annKeys       = []string{"note", "example.com/note", "|", "bad key", "a//b", "-x"}
	finalizers    = []string{"kubernetes", "example.com/f", "orphan", "foregroundDeletion", "|", "foo", "Bad/f", "a b/c", "example.com/"}
	owners        = []map[string]any{
		{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u1"},
		{"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "u2", "controller": true},
		{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "u3", "controller": true},
		nil,
		{"apiVersion": "", "kind": "ConfigMap", "name": "o", "uid": "u4"},
		{"apiVersion": "v1", "kind": "", "name": "o", "uid": "u5"},
		{"apiVersion": "v1", "kind": "ConfigMap", "name": "", "uid": "u6"},
		{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": ""},
		{"apiVersion": "v1", "kind": "List", "name": "o", "uid": "u7"},
		{"apiVersion": "a/b/c", "kind": "X", "name": "o", "uid": "u8"},
	}
)

// pick draws from l: a valid value (before the "|") most of the time,
// an invalid one (after it) one time in eight.
func pick(r *rand.Rand, l []string) string {
	sep := slices.Index(l, "|")
	if r.IntN(8) == 0 {
		return l[sep+1+r.IntN(len(l)-sep-1)]
	}
	return l[r.IntN(sep)]
}

// metadata draws an object's metadata.
func metadata(r *rand.Rand) map[string]any {
	m := map[string]any{}
	switch r.IntN(10) {
	case 0:
	case 1:
		m["generateName"] = pick(r, generateNames)
	case 2:
		m["generateName"] = pick(r, generateNames)
		m["name"] = pick(r, names)
	default:
		m["name"] = pick(r, names)
	}
	switch r.IntN(5) {
	case 0:
	case 1:
		m["namespace"] = pick(r, namespaces)
	default:
		m["namespace"] = "default"
	}
	if r.IntN(2) == 0 {
		labels := map[string]any{}
		for range 1 + r.IntN(3) {
			labels[pick(r, labelKeys)] = pick(r, labelValues)
		}
		m["labels"] = labels
	}
	if r.IntN(3) == 0 {
		ann := map[string]any{}
		for range 1 + r.IntN(2) {
			ann[pick(r, annKeys)] = "v"
		}
		if r.IntN(40) == 0 {
			ann["big"] = strings.Repeat("x", 256*1024)
		}
		m["annotations"] = ann
	}
	if r.IntN(3) == 0 {
		var fs []any
		for range 1 + r.IntN(3) {
			fs = append(fs, pick(r, finalizers))
		}
		m["finalizers"] = fs
	}
	if r.IntN(4) == 0 {
		var os []any
		for range 1 + r.IntN(3) {
			o := owners[r.IntN(3)]
			if r.IntN(8) == 0 {
				o = owners[4+r.IntN(len(owners)-4)]
			}
			os = append(os, o)
		}
		m["ownerReferences"] = os
	}
	if r.IntN(20) == 0 {
		m["generation"] = int64(-1)
	}
	return m
}

// generate gives u a name from its generateName when it has none, as the
// server does before validation (five characters every rule accepts
// stand for the random suffix).
func generate(u *unstructured.Unstructured) {
	if u.GetName() == "" && u.GetGenerateName() != "" {
		base := u.GetGenerateName()
		if len(base) > 58 {
			base = base[:58]
		}
		u.SetName(base + "xxxxx")
	}
}

// toInternal converts u to its kind's internal type through the legacy
// scheme, defaulted first when defaults is true (as the server decodes).
func toInternal(u *unstructured.Unstructured, defaults bool) (runtime.Object, error) {
	versioned, err := legacyscheme.Scheme.New(u.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, versioned); err != nil {
		return nil, err
	}
	if defaults {
		legacyscheme.Scheme.Default(versioned)
	}
	return legacyscheme.Scheme.ConvertToVersion(versioned, schema.GroupVersion{Group: u.GroupVersionKind().Group, Version: runtime.APIVersionInternal})
}

// metadataOnly keeps the errors under metadata, those of one field
// sorted by their text (the server's order within one field follows map
// iteration; vapkit sorts those runs).
func metadataOnly(errs field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, e := range errs {
		if e.Field == "metadata" || strings.HasPrefix(e.Field, "metadata.") {
			out = append(out, e)
		}
	}
	for i := 0; i < len(out); {
		j := i + 1
		for j < len(out) && out[j].Field == out[i].Field {
			j++
		}
		slices.SortStableFunc(out[i:j], func(a, b *field.Error) int { return strings.Compare(a.Error(), b.Error()) })
		i = j
	}
	return out
}

// shown is u's metadata as a failure shows it (a huge annotation elided).
func shown(u *unstructured.Unstructured) any {
	md := u.Object["metadata"].(map[string]any)
	if a, ok := md["annotations"].(map[string]any); ok && a["big"] != nil {
		return map[string]any{"(with a 256 KiB annotation)": true}
	}
	return md
}

func render(errs field.ErrorList) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "%s\n", e.Error())
	}
	return b.String()
}
