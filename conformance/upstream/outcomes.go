package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// orderGroup is a set of names whose relative order can change the outcome.
type orderGroup struct {
	kind  int // 0 policies, 1 bindings, 2 params
	names []string
}

// orderGroups returns the groups of c that upstream visits in an
// unspecified order: the bound policies, the bindings of each bound policy,
// and the parameters of each (kind, namespace) that a selector of some
// binding may list. Groups with fewer than two members are left out.
func orderGroups(c *Case) []orderGroup {
	policies := map[string]bool{}
	for _, p := range c.Policies {
		policies[p.Name] = true
	}
	bindingsOf := map[string][]string{}
	var bound []string
	selectorKinds := map[schema.GroupKind]bool{}
	for _, b := range c.Bindings {
		name := b.Spec.PolicyName
		if !policies[name] {
			continue
		}
		bindingsOf[name] = append(bindingsOf[name], b.Name)
		if b.Spec.ParamRef != nil && b.Spec.ParamRef.Selector != nil {
			for _, p := range c.Policies {
				if p.Name == name && p.Spec.ParamKind != nil {
					if gv, err := schema.ParseGroupVersion(p.Spec.ParamKind.APIVersion); err == nil {
						selectorKinds[gv.WithKind(p.Spec.ParamKind.Kind).GroupKind()] = true
					}
				}
			}
		}
	}
	for _, p := range c.Policies {
		if len(bindingsOf[p.Name]) > 0 && !slices.Contains(bound, p.Name) {
			bound = append(bound, p.Name)
		}
	}
	var groups []orderGroup
	if len(bound) > 1 {
		groups = append(groups, orderGroup{kind: 0, names: bound})
	}
	for _, p := range bound {
		if bs := bindingsOf[p]; len(bs) > 1 {
			groups = append(groups, orderGroup{kind: 1, names: bs})
		}
	}
	paramGroups := map[string][]string{}
	var paramGroupOrder []string
	for _, p := range c.Params {
		gk := p.GetObjectKind().GroupVersionKind().GroupKind()
		if !selectorKinds[gk] {
			continue
		}
		key, ok := paramKeyOf(p, gk)
		if !ok {
			continue
		}
		group := key[:strings.LastIndex(key, "/")]
		if _, seen := paramGroups[group]; !seen {
			paramGroupOrder = append(paramGroupOrder, group)
		}
		paramGroups[group] = append(paramGroups[group], key)
	}
	for _, g := range paramGroupOrder {
		if len(paramGroups[g]) > 1 {
			groups = append(groups, orderGroup{kind: 2, names: paramGroups[g]})
		}
	}
	return groups
}

// Orderings returns the orderings of c worth trying, document order first.
// When there are at most max distinct orderings it returns all of them and
// exhaustive is true; otherwise it returns max orderings drawn with a seed
// derived from c.Name, so the same case always gets the same sample.
func Orderings(c *Case, max int) (orders []Ordering, exhaustive bool) {
	if max < 1 {
		max = 1
	}
	groups := orderGroups(c)
	total := 1
	for _, g := range groups {
		for n := 2; n <= len(g.names); n++ {
			total *= n
			if total > max {
				break
			}
		}
		if total > max {
			break
		}
	}
	build := func(perms [][]string) Ordering {
		var o Ordering
		for i, g := range groups {
			switch g.kind {
			case 0:
				o.Policies = append(o.Policies, perms[i]...)
			case 1:
				o.Bindings = append(o.Bindings, perms[i]...)
			default:
				o.Params = append(o.Params, perms[i]...)
			}
		}
		return o
	}
	if total <= max {
		for index := 0; index < total; index++ {
			perms := make([][]string, len(groups))
			rest := index
			for i, g := range groups {
				radix := factorial(len(g.names))
				perms[i] = nthPermutation(g.names, rest%radix)
				rest /= radix
			}
			orders = append(orders, build(perms))
		}
		return orders, true
	}
	h := fnv.New64a()
	h.Write([]byte(c.Name))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x5eed))
	seen := map[string]bool{}
	identity := make([][]string, len(groups))
	for i, g := range groups {
		identity[i] = slices.Clone(g.names)
	}
	add := func(perms [][]string) {
		sig := fmt.Sprint(perms)
		if !seen[sig] {
			seen[sig] = true
			orders = append(orders, build(perms))
		}
	}
	add(identity)
	for attempt := 0; len(orders) < max && attempt < 8*max; attempt++ {
		perms := make([][]string, len(groups))
		for i, g := range groups {
			perms[i] = slices.Clone(g.names)
			rng.Shuffle(len(perms[i]), func(a, b int) { perms[i][a], perms[i][b] = perms[i][b], perms[i][a] })
		}
		add(perms)
	}
	return orders, false
}

func factorial(n int) int {
	f := 1
	for i := 2; i <= n; i++ {
		f *= i
	}
	return f
}

// nthPermutation returns permutation number k (0 is the identity) of names
// in lexicographic order of positions.
func nthPermutation(names []string, k int) []string {
	pool := slices.Clone(names)
	out := make([]string, 0, len(names))
	for n := len(pool); n > 0; n-- {
		f := factorial(n - 1)
		i := k / f
		k %= f
		out = append(out, pool[i])
		pool = slices.Delete(pool, i, i+1)
	}
	return out
}

// Outcomes runs c's request once per ordering from Orderings(c, max) and
// returns the distinct responses in the order first seen; the first is the
// document-order outcome. It runs one plugin instance per compile order
// from compileOrders (one, unless the case's policies read variables that
// other policies declare, on a server that types variables per process).
func Outcomes(ctx context.Context, c *Case, max int) ([]*admissionv1.AdmissionResponse, error) {
	compiles, err := compileOrders(c, 120)
	if err != nil {
		return nil, err
	}
	orders, _ := Orderings(c, max)
	var out []*admissionv1.AdmissionResponse
	seen := map[string]bool{}
	for _, compileOrder := range compiles {
		cl, err := newCluster(ctx, c, compileOrder, syncTimeout)
		if err != nil {
			return nil, err
		}
		for _, o := range orders {
			resp, err := cl.Run(ctx, o)
			if err != nil {
				cl.Close()
				return nil, err
			}
			key, err := json.Marshal(resp)
			if err != nil {
				cl.Close()
				return nil, fmt.Errorf("upstream: encoding response: %w", err)
			}
			if !seen[string(key)] {
				seen[string(key)] = true
				out = append(out, resp)
			}
		}
		cl.Close()
	}
	return out, nil
}
