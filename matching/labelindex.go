package matching

import (
	"context"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
)

// LabelIndexEntry is one policy for a [LabelIndex]: its compiled match
// constraints and the compiled match resources of its bindings, all from
// the same [MatcherSet].
type LabelIndexEntry struct {
	// ID identifies the policy in [LabelIndex.Filter]; IDs are small
	// non-negative integers, such as indexes into the caller's policies.
	ID int
	// Policy is the matcher of the policy's spec.matchConstraints.
	Policy *Matcher
	// Bindings are the matchers of the policy's bindings.
	Bindings []*Matcher
	// FailsWhenMatched marks a policy that reports an error as soon as its
	// own constraints match, before any binding is matched (the API
	// server's configuration errors, such as a paramKind of unknown
	// resource): its bindings cannot rule it out.
	FailsWhenMatched bool
}

// LabelIndex rules out, per request, the policies that cannot apply
// because of the namespace's or the object's labels, without visiting them:
// a policy whose own selectors require a label the request lacks, or none
// of whose bindings' selectors can select the request's labels.
//
// The index reads the label requirements that name values (key=value,
// key in (values), key exists); requirements that exclude (notin, !key)
// are not indexed. Each selector pair (a policy's own, or a binding's) is
// filed under its most selective requirement; per request, only the pairs
// filed under one of the namespace's or the objects' labels, and belonging
// to a policy in question, are checked against the rest of their
// requirements. A policy is ruled out only when matching it would report
// no match and no error: a policy whose matching could fail (a nil or invalid selector, a
// binding without matchResources, an equivalent resource of unknown kind, a
// failed namespace lookup, a cluster-scoped request that namespace
// selectors ignore) is kept, so that its error surfaces when the caller
// matches it, as the API server reports it.
//
// A LabelIndex is immutable and safe for concurrent use; per-request state
// lives in the [Scratch].
type LabelIndex struct {
	set     *MatcherSet
	clauses []clause
	// ns and obj map a label key and value (value anyValue for exists) to
	// the clauses filed under it for the namespace or the object.
	ns, obj map[term][]int32
	// policies holds each ID's state; IDs past its end are kept.
	policies []policyState
	// needsNamespace: some clause requires namespace labels, or some
	// policy ruled out by its bindings has a namespaceSelector whose
	// lookup could fail; the namespace is then looked up first.
	needsNamespace bool
	// bindingClauses: some policy may be ruled out by its bindings.
	bindingClauses bool
	// nsRequirements: some clause requires namespace labels; cluster-scoped
	// requests, which namespace selectors ignore, then keep everything.
	nsRequirements bool
}

// clause is the conjunction of the indexed requirements of one matcher's
// namespace and object selectors.
type clause struct {
	id      int32 // the policy ID
	binding bool  // a binding's clause; false for the policy's own
	ns, obj []requirement
	// filedNS: the clause is filed under its namespace requirement ns[0],
	// which therefore holds whenever the clause is checked.
	filedNS bool
}

// requirement is one indexed label requirement: the key must be present
// and, unless values is nil (exists), have one of the values.
type requirement struct {
	key    string
	values []string
}

// holds reports whether labels satisfy r.
func (r *requirement) holds(set map[string]string) bool {
	v, ok := set[r.key]
	if !ok {
		return false
	}
	if r.values == nil {
		return true
	}
	for _, x := range r.values {
		if x == v {
			return true
		}
	}
	return false
}

// term is one label a requirement accepts.
type term struct{ key, value string }

// anyValue stands for every value in the term of an exists requirement;
// label values cannot contain a NUL byte.
const anyValue = "\x00"

// policyState says how a policy is decided.
type policyState uint8

const (
	// kept: the policy is always kept (unknown ID, or nothing indexable).
	kept policyState = 0
	// ownClause: the policy's own selectors have a clause, which must hold.
	ownClause policyState = 1 << 0
	// bindingClauses: every binding has a clause; one must hold.
	bindingClauses policyState = 1 << 1
)

// NewLabelIndex indexes entries, whose matchers must come from s. An ID
// repeated in entries keeps the last entry.
func (s *MatcherSet) NewLabelIndex(entries []LabelIndexEntry) *LabelIndex {
	ix := &LabelIndex{set: s, ns: map[term][]int32{}, obj: map[term][]int32{}}
	maxID := -1
	for _, e := range entries {
		maxID = max(maxID, e.ID)
	}
	ix.policies = make([]policyState, maxID+1)
	for _, e := range entries {
		if e.ID < 0 {
			continue
		}
		ix.policies[e.ID] = ix.addPolicy(e)
	}
	ix.file()
	return ix
}

// addPolicy records the clauses of one entry and returns its state.
func (ix *LabelIndex) addPolicy(e LabelIndexEntry) policyState {
	var st policyState
	own, ownOK := ix.clauseOf(e.Policy)
	// Bindings may rule the policy out only when the policy's own
	// matching cannot fail on its selectors.
	bindingsOK := !e.FailsWhenMatched && len(e.Bindings) > 0 && ix.cleanPolicy(e.Policy)
	var bs []clause
	for _, b := range e.Bindings {
		c, ok := ix.clauseOf(b)
		if !ok {
			bindingsOK = false
			break
		}
		bs = append(bs, c)
	}
	if ownOK {
		st |= ownClause
		own.id = int32(e.ID)
		ix.clauses = append(ix.clauses, own)
	}
	if bindingsOK {
		st |= bindingClauses
		ix.bindingClauses = true
		if !ix.set.selectors[e.Policy.ns].empty {
			ix.needsNamespace = true
		}
		for _, c := range bs {
			c.id, c.binding = int32(e.ID), true
			ix.clauses = append(ix.clauses, c)
		}
	}
	return st
}

// file puts each clause under the values of its most selective
// requirement: the one whose most shared value is shared by the fewest
// clauses (a label has one value, so that is how many clauses a request
// can make the index check through it).
func (ix *LabelIndex) file() {
	type roleTerm struct {
		obj bool
		term
	}
	count := map[roleTerm]int{}
	for i := range ix.clauses {
		c := &ix.clauses[i]
		for role, reqs := range [2][]requirement{c.ns, c.obj} {
			for j := range reqs {
				for _, t := range reqs[j].terms() {
					count[roleTerm{role == 1, t}]++
				}
			}
		}
	}
	for i := range ix.clauses {
		c := &ix.clauses[i]
		bestRole, best, bestCount := 0, 0, -1
		for role, reqs := range [2][]requirement{c.ns, c.obj} {
			for j := range reqs {
				n := 0
				for _, t := range reqs[j].terms() {
					n = max(n, count[roleTerm{role == 1, t}])
				}
				if bestCount < 0 || n < bestCount {
					bestRole, best, bestCount = role, j, n
				}
			}
		}
		if len(c.ns) > 0 {
			ix.nsRequirements, ix.needsNamespace = true, true
		}
		var r *requirement
		post := ix.ns
		if bestRole == 1 {
			post, r = ix.obj, &c.obj[best]
		} else {
			// Move the filed requirement first: it need not be checked.
			c.ns[0], c.ns[best] = c.ns[best], c.ns[0]
			r, c.filedNS = &c.ns[0], true
		}
		for _, t := range r.terms() {
			post[t] = append(post[t], int32(i))
		}
	}
}

// terms lists the labels r accepts, anyValue standing for any value.
func (r *requirement) terms() []term {
	if r.values == nil {
		return []term{{r.key, anyValue}}
	}
	out := make([]term, len(r.values))
	for i, v := range r.values {
		out[i] = term{r.key, v}
	}
	return out
}

// cleanPolicy reports whether m's matching can fail only through its rules
// (an equivalent resource of unknown kind) or the namespace lookup, which
// Filter checks per request.
func (ix *LabelIndex) cleanPolicy(m *Matcher) bool {
	if m == nil || m.staticErr != nil || m.all || m.ns < 0 || m.obj < 0 {
		return false
	}
	return ix.set.selectors[m.ns].err == nil && ix.set.selectors[m.obj].err == nil
}

// clauseOf returns the indexed requirements of m's namespace and object
// selectors; ok is false when m has none or could fail.
func (ix *LabelIndex) clauseOf(m *Matcher) (c clause, ok bool) {
	if !ix.cleanPolicy(m) {
		return c, false
	}
	c.ns = selectorRequirements(&ix.set.selectors[m.ns])
	c.obj = selectorRequirements(&ix.set.selectors[m.obj])
	return c, len(c.ns)+len(c.obj) > 0
}

// selectorRequirements lists the requirements of cs the index reads.
func selectorRequirements(cs *compiledSelector) []requirement {
	if cs.empty || cs.sel == nil {
		return nil
	}
	reqs, _ := cs.sel.Requirements()
	var out []requirement
	for _, r := range reqs {
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			vs := r.ValuesUnsorted()
			if vs == nil {
				vs = []string{}
			}
			out = append(out, requirement{key: r.Key(), values: vs})
		case selection.Exists:
			out = append(out, requirement{key: r.Key()})
		}
	}
	return out
}

// labelScratch is a Scratch's state for one LabelIndex.
type labelScratch struct {
	ix *LabelIndex
	// gen stamps the entries of the current Filter call.
	gen uint32
	// the request's labels.
	nsLabels, objLabels, oldLabels map[string]string
	// per policy: the Filter call that listed it as a candidate, the call
	// that found one of its clauses holding, and which clauses hold.
	candGen, holdGen []uint32
	holds            []policyState
}

func (ls *labelScratch) clear() {
	clear(ls.candGen)
	clear(ls.holdGen)
	ls.gen = 0
}

func (ls *labelScratch) release() {
	ls.nsLabels, ls.objLabels, ls.oldLabels = nil, nil, nil
}

// next starts a Filter call.
func (ls *labelScratch) next() uint32 {
	ls.gen++
	if ls.gen == 0 {
		ls.clear()
		ls.gen = 1
	}
	return ls.gen
}

// scratchFor returns sc's state for ix, allocating it for a new index.
func (ix *LabelIndex) scratchFor(sc *Scratch) *labelScratch {
	ls := sc.li
	if ls == nil || ls.ix != ix {
		ls = &labelScratch{
			ix:      ix,
			candGen: make([]uint32, len(ix.policies)),
			holdGen: make([]uint32, len(ix.policies)),
			holds:   make([]policyState, len(ix.policies)),
		}
		sc.li = ls
	}
	return ls
}

// Filter appends to out the IDs of ids that the index cannot rule out for
// the request sc was last reset with, in the order of ids, and returns the
// extended slice. Every policy whose matching (its own match constraints,
// then its bindings) would report a match or an error is kept. sc must come
// from the set the index was built with.
func (ix *LabelIndex) Filter(ctx context.Context, sc *Scratch, ids, out []int) []int {
	if len(ids) == 0 {
		return out
	}
	if len(ix.clauses) == 0 {
		return append(out, ids...)
	}
	ls := ix.scratchFor(sc)
	gen := ls.next()
	for _, id := range ids {
		if id >= 0 && id < len(ix.policies) {
			ls.candGen[id] = gen
		}
	}
	usable, bindingsUsable := ix.prepare(ctx, sc, ls, gen)
	if !usable {
		return append(out, ids...)
	}
	for _, id := range ids {
		if id < 0 || id >= len(ix.policies) {
			out = append(out, id)
			continue
		}
		st := ix.policies[id]
		if st == kept {
			out = append(out, id)
			continue
		}
		var holds policyState
		if ls.holdGen[id] == gen {
			holds = ls.holds[id]
		}
		if !bindingsUsable {
			holds |= bindingClauses
		}
		if st&holds == st {
			out = append(out, id)
		}
	}
	return out
}

// prepare checks the clauses of candidate policies filed under the
// request's labels and notes which of them hold. usable is false when the
// index can rule nothing out for the request; bindingsUsable when binding
// clauses cannot rule policies out.
func (ix *LabelIndex) prepare(ctx context.Context, sc *Scratch, ls *labelScratch, gen uint32) (usable, bindingsUsable bool) {
	ls.nsLabels, ls.objLabels, ls.oldLabels = nil, nil, nil
	a := sc.a
	if a == nil {
		return false, false
	}
	// Namespace selectors are not consulted for cluster-scoped requests
	// other than namespaces, and a failed lookup is an error the caller
	// must see: the index then keeps everything.
	switch namespaced := a.Namespace != "" || a.Resource.Resource == "namespaces"; {
	case !namespaced && ix.nsRequirements:
		return false, false
	case namespaced && ix.needsNamespace:
		nsLabels, err := sc.namespaceLabels(ctx)
		if err != nil {
			return false, false
		}
		ls.nsLabels = nsLabels
	}
	ls.objLabels, ls.oldLabels = objectLabels(a.Object), objectLabels(a.OldObject)
	for k, v := range ls.nsLabels {
		ix.check(ls, gen, ix.ns, k, v)
	}
	if len(ix.obj) > 0 {
		for k, v := range ls.objLabels {
			ix.check(ls, gen, ix.obj, k, v)
		}
		for k, v := range ls.oldLabels {
			ix.check(ls, gen, ix.obj, k, v)
		}
	}
	return true, ix.bindingClauses && !unknownEquivalentKinds(a, sc.o)
}

// check verifies the clauses of candidate policies filed under the label
// k=v (or k) and marks the policies of those that hold.
func (ix *LabelIndex) check(ls *labelScratch, gen uint32, post map[term][]int32, k, v string) {
	for i, val := range [2]string{v, anyValue} {
		if i == 1 && v == anyValue {
			break // a corrupt label value must not be looked up twice
		}
		for _, c := range post[term{k, val}] {
			cl := &ix.clauses[c]
			id := cl.id
			if ls.candGen[id] != gen || !ix.clauseHolds(ls, cl) {
				continue
			}
			if ls.holdGen[id] != gen {
				ls.holdGen[id] = gen
				ls.holds[id] = 0
			}
			if cl.binding {
				ls.holds[id] |= bindingClauses
			} else {
				ls.holds[id] |= ownClause
			}
		}
	}
}

// clauseHolds reports whether the namespace's labels satisfy every
// namespace requirement of cl and the new or the old object's labels every
// object requirement.
func (ix *LabelIndex) clauseHolds(ls *labelScratch, cl *clause) bool {
	first := 0
	if cl.filedNS {
		first = 1
	}
	for i := first; i < len(cl.ns); i++ {
		if !cl.ns[i].holds(ls.nsLabels) {
			return false
		}
	}
	if len(cl.obj) == 0 {
		return true
	}
	return allHold(cl.obj, ls.objLabels) || allHold(cl.obj, ls.oldLabels)
}

func allHold(reqs []requirement, set map[string]string) bool {
	if set == nil {
		return false
	}
	for i := range reqs {
		if !reqs[i].holds(set) {
			return false
		}
	}
	return true
}

// objectLabels returns the labels of obj, nil when it has no metadata.
func objectLabels(obj runtime.Object) labels.Set {
	acc, err := accessor(obj)
	if err != nil {
		return nil
	}
	return acc.GetLabels()
}

// unknownEquivalentKinds reports whether matching a policy with matchPolicy
// Equivalent may fail for a with "unknown kind", in which case policies must
// be matched even when no binding can select the request.
func unknownEquivalentKinds(a *Attributes, o Options) bool {
	m := o.Resources
	if m == nil {
		return false
	}
	for _, eq := range m.EquivalentResourcesFor(a.Resource, a.SubResource) {
		if eq != a.Resource && m.KindFor(eq, a.SubResource).Empty() {
			return true
		}
	}
	return false
}
