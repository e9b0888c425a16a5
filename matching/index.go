package matching

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// IndexEntry is one MatchResources (a policy's matchConstraints or a
// binding's matchResources) to be indexed under an opaque ID chosen by the
// caller.
type IndexEntry struct {
	// ID identifies the entry in [Index.Candidates] results. IDs need not be
	// dense or unique; an ID shared by several entries is reported once if
	// any of them is a candidate.
	ID int
	// MatchResources is the entry's match criteria. Nil is allowed (a
	// policy without matchConstraints, a binding without matchResources)
	// and makes the entry a candidate for every request.
	MatchResources *admissionregistrationv1.MatchResources
}

// Index narrows a large set of MatchResources down to those whose resource
// rules could select a request, so that policies for other resources cost
// a few map lookups per request instead of one [Match] each.
//
// Candidates are a superset: every entry for which [Match], [MatchPolicy]
// or [MatchBinding] would report a match or an error is a candidate, but a
// candidate may still not match (versions, scope, subresources,
// resourceNames and selectors are not indexed). Callers run the real
// matching on the candidates.
//
// An Index is immutable and safe for concurrent use. The zero value is an
// empty index.
type Index struct {
	// always lists entries that are candidates for every request: nil
	// MatchResources, nil selectors (an error for every request), empty
	// resourceRules (match every request) and entries with too many keys.
	always []int
	// exact indexes resourceRules by operation, group and resource, for
	// matching the request as issued.
	exact map[indexKey][]int
	// equivalent indexes, for entries whose matchPolicy is not nil or
	// Exact, both resourceRules and excludeResourceRules (an exclude rule
	// can fail with "unknown kind" on an equivalent resource), for matching
	// the request's equivalent resources.
	equivalent map[indexKey][]int
	// equivalentByOp indexes the same entries as equivalent by operation
	// only, for when the equivalent resources are not known.
	equivalentByOp map[string][]int
}

// indexKey is one (operation, group, resource) combination a rule admits;
// each part may be "*". Versions, scopes and subresources are not indexed.
type indexKey struct {
	op, group, resource string
}

// maxIndexKeys bounds the keys stored for one entry; an entry whose rules
// multiply out to more (many operations × groups × resources) is made a
// candidate for every request instead.
const maxIndexKeys = 1024

// NewIndex builds an [Index] over entries. The entries and their
// MatchResources are read during NewIndex only; later changes to them are
// not seen.
func NewIndex(entries []IndexEntry) *Index {
	sorted := slices.Clone(entries)
	slices.SortStableFunc(sorted, func(x, y IndexEntry) int { return cmp.Compare(x.ID, y.ID) })

	ix := &Index{
		exact:          map[indexKey][]int{},
		equivalent:     map[indexKey][]int{},
		equivalentByOp: map[string][]int{},
	}
	for _, e := range sorted {
		mr := e.MatchResources
		if mr == nil || mr.NamespaceSelector == nil || mr.ObjectSelector == nil || len(mr.ResourceRules) == 0 {
			ix.always = append(ix.always, e.ID)
			continue
		}
		exactKeys, ok := ruleKeys(nil, mr.ResourceRules)
		if !ok {
			ix.always = append(ix.always, e.ID)
			continue
		}
		var equivKeys map[indexKey]struct{}
		if mr.MatchPolicy != nil && *mr.MatchPolicy != admissionregistrationv1.Exact {
			equivKeys, ok = ruleKeys(maps.Clone(exactKeys), mr.ExcludeResourceRules)
			if !ok {
				ix.always = append(ix.always, e.ID)
				continue
			}
		}
		for k := range exactKeys {
			ix.exact[k] = append(ix.exact[k], e.ID)
		}
		ops := map[string]struct{}{}
		for k := range equivKeys {
			ix.equivalent[k] = append(ix.equivalent[k], e.ID)
			ops[k.op] = struct{}{}
		}
		for op := range ops {
			ix.equivalentByOp[op] = append(ix.equivalentByOp[op], e.ID)
		}
	}

	// Entries were visited in ID order, so every list is sorted; only
	// repeated IDs need removing.
	ix.always = slices.Compact(ix.always)
	for k, ids := range ix.exact {
		ix.exact[k] = slices.Compact(ids)
	}
	for k, ids := range ix.equivalent {
		ix.equivalent[k] = slices.Compact(ids)
	}
	for k, ids := range ix.equivalentByOp {
		ix.equivalentByOp[k] = slices.Compact(ids)
	}
	return ix
}

// ruleKeys adds to keys (allocated when nil) every key the rules admit. It
// reports false when more than maxIndexKeys keys would be needed.
func ruleKeys(keys map[indexKey]struct{}, rules []admissionregistrationv1.NamedRuleWithOperations) (map[indexKey]struct{}, bool) {
	if keys == nil {
		keys = map[indexKey]struct{}{}
	}
	for _, r := range rules {
		n := len(r.Operations) * len(r.APIGroups) * len(r.Resources)
		if n > maxIndexKeys || len(keys)+n > maxIndexKeys {
			return nil, false
		}
		for _, op := range r.Operations {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					resource, _, _ := strings.Cut(res, "/")
					keys[indexKey{op: string(op), group: g, resource: resource}] = struct{}{}
				}
			}
		}
	}
	return keys, true
}

// Candidates returns, in ascending order and without repetition, the IDs of
// the entries that could match a whatever runtime.EquivalentResourceMapper
// is passed to [Match]. Because the resources equivalent to the request are
// unknown here, every entry with a matchPolicy other than Exact (the API
// server's default is Equivalent) and a rule for the request's operation is
// a candidate; use [Index.CandidatesFor] with the mapper given to [Match]
// for a narrower answer. Candidates returns nil for nil a or a nil Index.
func (ix *Index) Candidates(a *Attributes) []int {
	if ix == nil || a == nil {
		return nil
	}
	out := ix.lookup(nil, ix.exact, a.Operation, a.Resource.Group, a.Resource.Resource)
	out = append(out, ix.equivalentByOp[a.Operation]...)
	out = append(out, ix.equivalentByOp[string(admissionregistrationv1.OperationAll)]...)
	return ix.finish(out)
}

// CandidatesFor returns, in ascending order and without repetition, the IDs
// of the entries that could match a when [Match] is called with
// [Options.Resources] set to m. A nil m means no equivalent resources, as in
// [Match]. The mapper is queried once, with the request's resource and
// subresource, exactly as [Match] queries it. CandidatesFor returns nil for
// nil a or a nil Index.
func (ix *Index) CandidatesFor(a *Attributes, m runtime.EquivalentResourceMapper) []int {
	if ix == nil || a == nil {
		return nil
	}
	out := ix.lookup(nil, ix.exact, a.Operation, a.Resource.Group, a.Resource.Resource)
	if m != nil && len(ix.equivalent) > 0 {
		for _, eq := range m.EquivalentResourcesFor(a.Resource, a.SubResource) {
			if eq == a.Resource {
				continue
			}
			out = ix.lookup(out, ix.equivalent, a.Operation, eq.Group, eq.Resource)
		}
	}
	return ix.finish(out)
}

// lookup appends the IDs stored in t under the eight combinations of the
// given operation, group and resource with "*".
func (ix *Index) lookup(out []int, t map[indexKey][]int, op, group, resource string) []int {
	if len(t) == 0 {
		return out
	}
	for _, o := range [2]string{op, "*"} {
		for _, g := range [2]string{group, "*"} {
			for _, r := range [2]string{resource, "*"} {
				out = append(out, t[indexKey{op: o, group: g, resource: r}]...)
			}
		}
	}
	return out
}

// finish adds the always-candidates and returns the sorted, de-duplicated
// result; it never returns a slice owned by the Index.
func (ix *Index) finish(out []int) []int {
	out = append(out, ix.always...)
	if len(out) == 0 {
		return nil
	}
	slices.Sort(out)
	return slices.Compact(out)
}
