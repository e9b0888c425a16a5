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
}

// LabelIndex rules out, per request, the policies that cannot apply
// because of the namespace's or the object's labels, without visiting them:
// a policy whose own selectors require a label the request lacks, or none
// of whose bindings' selectors can select the request's labels.
//
// The index reads the label requirements that name values (key=value,
// key in (values), key exists) and counts, per request, which of them the
// namespace's labels, the object's labels and the old object's labels
// satisfy; requirements that exclude (notin, !key) are not indexed. A
// policy is ruled out only when matching it would report no match and no
// error: a policy whose matching could fail (a nil or invalid selector, a
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
	// the clauses requiring it of the namespace or the object.
	ns, obj map[term][]int32
	// policies holds each ID's state; IDs past its end are kept.
	policies []policyState
	// needsNamespace: some clause requires namespace labels, or some
	// policy ruled out by its bindings has a namespaceSelector whose
	// lookup could fail; the namespace is then looked up first.
	needsNamespace bool
	// bindingClauses: some policy may be ruled out by its bindings.
	bindingClauses bool
}

// clause is the conjunction of the indexed requirements of one matcher.
type clause struct {
	id      int32 // the policy ID
	binding bool  // a binding's clause; false for the policy's own
	nsNeed  uint16
	objNeed uint16
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

// maxClauseTerms bounds the requirements counted per clause.
const maxClauseTerms = 1 << 15

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
		var st policyState
		own, ownOK := ix.terms(e.Policy)
		if ownOK {
			st |= ownClause
		}
		// Bindings may rule the policy out only when the policy's own
		// matching cannot fail on its selectors.
		bindingsOK := len(e.Bindings) > 0 && ix.cleanPolicy(e.Policy)
		var bs [][2][]term
		for _, b := range e.Bindings {
			t, ok := ix.terms(b)
			if !ok {
				bindingsOK = false
				break
			}
			bs = append(bs, t)
		}
		if bindingsOK {
			st |= bindingClauses
			ix.bindingClauses = true
			if !ix.set.selectors[e.Policy.ns].empty {
				ix.needsNamespace = true
			}
		}
		ix.policies[e.ID] = st
		if ownOK {
			ix.addClause(e.ID, false, own)
		}
		if bindingsOK {
			for _, t := range bs {
				ix.addClause(e.ID, true, t)
			}
		}
	}
	return ix
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

// terms returns the indexed requirements of m's namespace and object
// selectors; ok is false when m has none or could fail.
func (ix *LabelIndex) terms(m *Matcher) (t [2][]term, ok bool) {
	if !ix.cleanPolicy(m) {
		return t, false
	}
	t[0] = selectorTerms(&ix.set.selectors[m.ns])
	t[1] = selectorTerms(&ix.set.selectors[m.obj])
	n := len(t[0]) + len(t[1])
	return t, n > 0 && n <= maxClauseTerms
}

// selectorTerms lists the requirements of cs the index counts; each holds
// for one value of its key.
func selectorTerms(cs *compiledSelector) []term {
	if cs.empty || cs.sel == nil {
		return nil
	}
	reqs, _ := cs.sel.Requirements()
	var out []term
	for _, r := range reqs {
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			for _, v := range r.ValuesUnsorted() {
				out = append(out, term{r.Key(), v})
			}
			// One requirement is one term whatever its number of
			// values: mark the end with a separator entry.
			out = append(out, term{})
		case selection.Exists:
			out = append(out, term{r.Key(), anyValue}, term{})
		}
	}
	return out
}

// addClause records a clause for the requirements t (namespace, object),
// each requirement's values ended by a zero term.
func (ix *LabelIndex) addClause(id int, binding bool, t [2][]term) {
	c := clause{id: int32(id), binding: binding}
	n := int32(len(ix.clauses))
	for role, ts := range t {
		post := ix.ns
		if role == 1 {
			post = ix.obj
		}
		for _, x := range ts {
			if x == (term{}) {
				if role == 0 {
					c.nsNeed++
				} else {
					c.objNeed++
				}
				continue
			}
			// A requirement's values are distinct, so a label hits it
			// at most once; two requirements naming the same label are
			// posted, and counted, twice.
			post[x] = append(post[x], n)
		}
	}
	if c.nsNeed > 0 {
		ix.needsNamespace = true
	}
	ix.clauses = append(ix.clauses, c)
}

// labelScratch is a Scratch's state for one LabelIndex.
type labelScratch struct {
	ix  *LabelIndex
	gen uint32 // the Scratch generation prepared; 0 for none
	// usable: the index may rule policies out for this request;
	// bindingsUsable: binding clauses may.
	usable, bindingsUsable bool
	// per clause: the generation that touched it and its hits.
	clauseGen []uint32
	nsHits    []uint16
	objHits   [][2]uint16 // new object, old object
	touched   []int32
	// per policy: the generation and which of its clauses hold.
	policyGen []uint32
	holds     []policyState
}

func (ls *labelScratch) clear() {
	clear(ls.clauseGen)
	clear(ls.policyGen)
	ls.gen = 0
}

func (ls *labelScratch) release() {
	ls.touched = ls.touched[:0]
}

// scratchFor returns sc's state for ix, allocating it for a new index.
func (ix *LabelIndex) scratchFor(sc *Scratch) *labelScratch {
	ls := sc.li
	if ls == nil || ls.ix != ix {
		ls = &labelScratch{
			ix:        ix,
			clauseGen: make([]uint32, len(ix.clauses)),
			nsHits:    make([]uint16, len(ix.clauses)),
			objHits:   make([][2]uint16, len(ix.clauses)),
			policyGen: make([]uint32, len(ix.policies)),
			holds:     make([]policyState, len(ix.policies)),
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
	ls := ix.prepare(ctx, sc)
	if !ls.usable {
		return append(out, ids...)
	}
	for _, id := range ids {
		if ix.keeps(ls, sc.gen, id) {
			out = append(out, id)
		}
	}
	return out
}

// keeps decides one policy from the prepared counts.
func (ix *LabelIndex) keeps(ls *labelScratch, gen uint32, id int) bool {
	if id < 0 || id >= len(ix.policies) {
		return true
	}
	st := ix.policies[id]
	var holds policyState
	if ls.policyGen[id] == gen {
		holds = ls.holds[id]
	}
	if st&ownClause != 0 && holds&ownClause == 0 {
		return false
	}
	if st&bindingClauses != 0 && ls.bindingsUsable && holds&bindingClauses == 0 {
		return false
	}
	return true
}

// prepare counts, once per request, the requirements the request's labels
// satisfy and notes which clauses hold.
func (ix *LabelIndex) prepare(ctx context.Context, sc *Scratch) *labelScratch {
	ls := ix.scratchFor(sc)
	if ls.gen == sc.gen {
		return ls
	}
	ls.gen = sc.gen
	ls.usable, ls.bindingsUsable = false, false
	ls.touched = ls.touched[:0]
	a := sc.a
	if a == nil {
		return ls
	}
	// Namespace selectors are not consulted for cluster-scoped requests
	// other than namespaces, and a failed lookup is an error the caller
	// must see: the index then keeps everything.
	switch namespaced := a.Namespace != "" || a.Resource.Resource == "namespaces"; {
	case !namespaced && len(ix.ns) > 0:
		return ls
	case namespaced && ix.needsNamespace:
		nsLabels, err := sc.namespaceLabels(ctx)
		if err != nil {
			return ls
		}
		for k, v := range nsLabels {
			ix.hit(ls, sc.gen, ix.ns, k, v, 0)
		}
	}
	if len(ix.obj) > 0 {
		for i, obj := range [2]runtime.Object{a.Object, a.OldObject} {
			for k, v := range objectLabels(obj) {
				ix.hit(ls, sc.gen, ix.obj, k, v, 1+i)
			}
		}
	}
	for _, c := range ls.touched {
		cl := &ix.clauses[c]
		if ls.nsHits[c] != cl.nsNeed {
			continue
		}
		if cl.objNeed > 0 && ls.objHits[c][0] != cl.objNeed && ls.objHits[c][1] != cl.objNeed {
			continue
		}
		id := cl.id
		if ls.policyGen[id] != sc.gen {
			ls.policyGen[id] = sc.gen
			ls.holds[id] = 0
		}
		if cl.binding {
			ls.holds[id] |= bindingClauses
		} else {
			ls.holds[id] |= ownClause
		}
	}
	ls.usable = true
	ls.bindingsUsable = ix.bindingClauses && !unknownEquivalentKinds(a, sc.o)
	return ls
}

// hit counts the label k=v for every clause requiring it (or k) of the
// role: 0 namespace, 1 object, 2 old object.
func (ix *LabelIndex) hit(ls *labelScratch, gen uint32, post map[term][]int32, k, v string, role int) {
	for i, val := range [2]string{v, anyValue} {
		if i == 1 && v == anyValue {
			break // a corrupt label value must not count twice
		}
		for _, c := range post[term{k, val}] {
			if ls.clauseGen[c] != gen {
				ls.clauseGen[c] = gen
				ls.nsHits[c] = 0
				ls.objHits[c] = [2]uint16{}
				ls.touched = append(ls.touched, c)
			}
			if role == 0 {
				ls.nsHits[c]++
			} else {
				ls.objHits[c][role-1]++
			}
		}
	}
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
