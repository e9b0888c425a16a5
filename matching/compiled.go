package matching

import (
	"context"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// MatcherSet compiles the MatchResources of policies and bindings once, so
// that no label selector is parsed or validated per request. Equal
// selectors are compiled once and shared by every matcher of the set, and a
// [Scratch] decides each shared selector at most once per request.
//
// Build a set with [NewMatcherSet], add every policy and binding with
// [MatcherSet.Policy] and [MatcherSet.Binding], then match requests with
// [Matcher.Match] through a [Scratch]. Adding is not safe for concurrent
// use; once all matchers are added, the set and its matchers are immutable
// and safe for concurrent use.
type MatcherSet struct {
	selectors []compiledSelector
	byKey     map[string]int
}

// compiledSelector is one distinct label selector of a set.
type compiledSelector struct {
	sel labels.Selector // nil when err is set
	err error           // the conversion error, before InternalError wrapping
	// empty: the selector selects everything (no requirements).
	empty bool
}

// Matcher is the compiled form of one policy's spec.matchConstraints or
// one binding's spec.matchResources. The zero value is not usable; get one
// from a [MatcherSet].
type Matcher struct {
	mr *admissionregistrationv1.MatchResources
	// staticErr is the error every request gets: a nil matchConstraints
	// of a policy, or a nil selector.
	staticErr error
	// all: a binding without matchResources matches every request.
	all bool
	// ns and obj index the set's selectors; -1 for a nil selector.
	ns, obj int
}

// NewMatcherSet returns an empty set.
func NewMatcherSet() *MatcherSet {
	return &MatcherSet{byKey: map[string]int{}}
}

// Policy compiles the match constraints of p with the semantics of
// [MatchPolicy]. p is read during the call only, except that the returned
// matcher keeps p.Spec.MatchConstraints, which must not be modified
// afterwards. A nil p yields a matcher that fails every request.
func (s *MatcherSet) Policy(p *admissionregistrationv1.ValidatingAdmissionPolicy) *Matcher {
	if p == nil {
		return &Matcher{staticErr: errNilPolicy, ns: -1, obj: -1}
	}
	mr := p.Spec.MatchConstraints
	if mr == nil {
		return &Matcher{staticErr: errNoConstraints, ns: -1, obj: -1}
	}
	return s.compile(mr, checkSelectors(mr))
}

// Binding compiles the match resources of b with the semantics of
// [MatchBinding]; the same ownership rules as for [MatcherSet.Policy]
// apply. A nil b yields a matcher that fails every request.
func (s *MatcherSet) Binding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) *Matcher {
	if b == nil {
		return &Matcher{staticErr: errNilBinding, ns: -1, obj: -1}
	}
	mr := b.Spec.MatchResources
	if mr == nil {
		return &Matcher{all: true, ns: -1, obj: -1}
	}
	return s.compile(mr, checkSelectors(mr))
}

// MatchResources compiles mr with the semantics of [Match]: a nil
// selector selects nothing. A nil mr yields a matcher that fails every
// request.
func (s *MatcherSet) MatchResources(mr *admissionregistrationv1.MatchResources) *Matcher {
	if mr == nil {
		return &Matcher{staticErr: errNilMatch, ns: -1, obj: -1}
	}
	return s.compile(mr, nil)
}

func (s *MatcherSet) compile(mr *admissionregistrationv1.MatchResources, staticErr error) *Matcher {
	return &Matcher{mr: mr, staticErr: staticErr, ns: s.selector(mr.NamespaceSelector), obj: s.selector(mr.ObjectSelector)}
}

// Selectors returns how many distinct label selectors the set holds.
func (s *MatcherSet) Selectors() int { return len(s.selectors) }

// selector returns the index of ls in the set, compiling it the first
// time; -1 for nil.
func (s *MatcherSet) selector(ls *metav1.LabelSelector) int {
	if ls == nil {
		return -1
	}
	key := selectorKey(ls)
	if i, ok := s.byKey[key]; ok {
		return i
	}
	sel, err := selectorFor(ls)
	cs := compiledSelector{sel: sel, err: err}
	if err == nil {
		cs.empty = sel.Empty()
	} else {
		cs.sel = nil
	}
	s.selectors = append(s.selectors, cs)
	s.byKey[key] = len(s.selectors) - 1
	return len(s.selectors) - 1
}

// selectorKey is a canonical form of ls: selectors with equal keys convert
// to the same labels.Selector and fail with the same error. matchLabels are
// sorted (selectorFor visits them sorted); matchExpressions keep their
// order, which decides which error is reported.
func selectorKey(ls *metav1.LabelSelector) string {
	var b strings.Builder
	keys := sortedKeys(ls.MatchLabels)
	b.WriteString(strconv.Itoa(len(keys)))
	for _, k := range keys {
		writeQuoted(&b, k)
		writeQuoted(&b, ls.MatchLabels[k])
	}
	for _, e := range ls.MatchExpressions {
		b.WriteByte('|')
		writeQuoted(&b, e.Key)
		writeQuoted(&b, string(e.Operator))
		b.WriteString(strconv.Itoa(len(e.Values)))
		for _, v := range e.Values {
			writeQuoted(&b, v)
		}
	}
	return b.String()
}

func writeQuoted(b *strings.Builder, s string) {
	b.WriteString(strconv.Itoa(len(s)))
	b.WriteByte(':')
	b.WriteString(s)
}

// Scratch is the per-request state of matching with a [MatcherSet]: the
// request, its namespace (looked up at most once) and the answer of each
// selector, decided at most once. A Scratch belongs to one goroutine;
// reuse it for later requests with [Scratch.Reset], which keeps its
// memory.
type Scratch struct {
	set *MatcherSet
	a   *Attributes
	o   Options
	// gen stamps the memo entries of the current request; entries with an
	// older stamp are unknown.
	gen uint32
	// nsGen, objGen and answers remember selector decisions: answers[i]
	// bit 0 is the namespace role's answer, bit 1 the object role's.
	nsGen, objGen []uint32
	answers       []uint8

	nsDone   bool
	nsLabels map[string]string
	nsErr    error

	// li is the state of the LabelIndex last used with this Scratch (see
	// LabelIndex.Filter); it keeps its own generations.
	li *labelScratch
}

// NewScratch returns a Scratch for requests matched against s. It must be
// [Scratch.Reset] before use.
func (s *MatcherSet) NewScratch() *Scratch {
	return &Scratch{set: s}
}

// Reset starts a new request: a and o describe it as for [Match]. a and
// the values it references must not change until the next Reset. Reset
// clears what the Scratch remembered of the previous request.
func (sc *Scratch) Reset(a *Attributes, o Options) {
	sc.a, sc.o = a, o
	sc.gen++
	if sc.gen == 0 {
		// The stamps wrapped around: forget them all.
		clear(sc.nsGen)
		clear(sc.objGen)
		sc.gen = 1
	}
	if n := len(sc.set.selectors); len(sc.nsGen) < n {
		sc.nsGen = make([]uint32, n)
		sc.objGen = make([]uint32, n)
		sc.answers = make([]uint8, n)
	}
	sc.nsDone, sc.nsLabels, sc.nsErr = false, nil, nil
}

// Release drops the Scratch's references to the last request, so that a
// pooled Scratch pins no request's objects.
func (sc *Scratch) Release() {
	sc.a, sc.o = nil, Options{}
	sc.nsLabels, sc.nsErr = nil, nil
	sc.nsDone = false
	if sc.li != nil {
		sc.li.release()
	}
}

// namespaceLabels returns the labels namespace selectors are matched
// against, looking the namespace up once per request.
func (sc *Scratch) namespaceLabels(ctx context.Context) (map[string]string, error) {
	if !sc.nsDone {
		sc.nsLabels, sc.nsErr = namespaceLabels(ctx, sc.a, sc.o.Namespaces)
		sc.nsDone = true
	}
	return sc.nsLabels, sc.nsErr
}

// Match reports whether m selects the request sc was last reset with, as
// [MatchPolicy], [MatchBinding] or [Match] does for the policy, binding or
// MatchResources m was compiled from. For a binding, Result.Resource and
// Result.Kind are those of the binding's own rules and are meant to be
// discarded, as in MatchBinding. sc must come from the set m belongs to.
func (m *Matcher) Match(ctx context.Context, sc *Scratch) (Result, error) {
	if m.staticErr != nil {
		return Result{}, m.staticErr
	}
	a := sc.a
	if m.all {
		if a == nil {
			return Result{Matched: true}, nil
		}
		return Result{Matched: true, Resource: a.Resource, Kind: a.Kind}, nil
	}
	if a == nil {
		return Result{}, errNilAttributes
	}
	res, ruleErr := matchRules(m.mr, a, sc.o.Resources)
	if ruleErr == nil && !res.Matched {
		return Result{}, nil
	}
	nsMatched, nsErr := sc.namespaceSelects(ctx, m.ns)
	if !nsMatched && nsErr == nil {
		return Result{}, nil
	}
	objMatched, objErr := sc.objectSelects(m.obj)
	if !objMatched && objErr == nil {
		return Result{}, nil
	}
	switch {
	case ruleErr != nil:
		return Result{}, ruleErr
	case nsErr != nil:
		return Result{}, nsErr
	case objErr != nil:
		return Result{}, objErr
	}
	return res, nil
}

// namespaceSelects is matchNamespaceSelector for the set's selector i,
// remembering the answer for the request.
func (sc *Scratch) namespaceSelects(ctx context.Context, i int) (bool, error) {
	a := sc.a
	if a.Namespace == "" && a.Resource.Resource != "namespaces" {
		return true, nil
	}
	if i < 0 {
		return false, nil // a nil selector selects nothing
	}
	cs := &sc.set.selectors[i]
	if cs.err != nil {
		return false, apierrors.NewInternalError(cs.err)
	}
	if cs.empty {
		return true, nil
	}
	if sc.nsGen[i] == sc.gen {
		return sc.answers[i]&1 != 0, nil
	}
	nsLabels, err := sc.namespaceLabels(ctx)
	if err != nil {
		return false, namespaceLookupError(err)
	}
	ok := cs.sel.Matches(labels.Set(nsLabels))
	sc.nsGen[i] = sc.gen
	if ok {
		sc.answers[i] |= 1
	} else {
		sc.answers[i] &^= 1
	}
	return ok, nil
}

// objectSelects is matchObjectSelector for the set's selector i,
// remembering the answer for the request.
func (sc *Scratch) objectSelects(i int) (bool, error) {
	if i < 0 {
		return false, nil
	}
	cs := &sc.set.selectors[i]
	if cs.err != nil {
		return false, apierrors.NewInternalError(cs.err)
	}
	if cs.empty {
		return true, nil
	}
	if sc.objGen[i] == sc.gen {
		return sc.answers[i]&2 != 0, nil
	}
	ok := objectLabelsMatch(sc.a.Object, cs.sel) || objectLabelsMatch(sc.a.OldObject, cs.sel)
	sc.objGen[i] = sc.gen
	if ok {
		sc.answers[i] |= 2
	} else {
		sc.answers[i] &^= 2
	}
	return ok, nil
}
