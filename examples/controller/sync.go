package controller

import (
	"cmp"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	admissionregistrationv1listers "k8s.io/client-go/listers/admissionregistration/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/vapkit/vapkit/policy"
)

// DefaultDebounce is how long [PolicySync] waits after a change before it
// recompiles, so that a burst of changes (kubectl apply of a directory)
// compiles once.
const DefaultDebounce = 500 * time.Millisecond

// SyncOptions configure [NewPolicySync]; the zero value is valid.
type SyncOptions struct {
	// Options are passed to policy.Compile; set Params, Namespaces and
	// Resources for the cluster (see [InformerParams], [ClientNamespaces]).
	Options policy.Options
	// Debounce is the delay between the first change of a burst and the
	// recompile; 0 means DefaultDebounce.
	Debounce time.Duration
	// Clock schedules the recompiles; nil means the real clock. Tests
	// inject k8s.io/utils/clock/testing.FakeClock.
	Clock clock.WithDelayedExecution
	// DryRun compiles every binding's Deny action as Warn ([WarnInsteadOfDeny]).
	DryRun bool
	// Logger receives one line per compile; nil discards them.
	Logger *slog.Logger
	// Metrics records the generation and failed compiles.
	Metrics *Metrics
	// OnSync, if set, is called after every compile attempt with the
	// generation then served and the compile's error.
	OnSync func(generation int64, err error)
	// compile replaces policy.Compile in tests.
	compile func([]*admissionregistrationv1.ValidatingAdmissionPolicy, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding, policy.Options) (*policy.Evaluator, error)
}

// PolicySync keeps an evaluator compiled from the cluster's
// ValidatingAdmissionPolicies and bindings, read from client-go informers.
// Every add, update or delete schedules a recompile after the debounce
// delay; changes during the delay join it. A compile that fails keeps the
// previous evaluator serving. Safe for concurrent use.
type PolicySync struct {
	opts     SyncOptions
	policies admissionregistrationv1listers.ValidatingAdmissionPolicyLister
	bindings admissionregistrationv1listers.ValidatingAdmissionPolicyBindingLister

	current atomic.Pointer[served]

	mu      sync.Mutex // serialises compiles
	pending bool       // a recompile is scheduled
	pmu     sync.Mutex // guards pending
	lastErr error
}

// served is an evaluator and its generation, swapped together.
type served struct {
	ev  *policy.Evaluator
	gen int64
}

// NewPolicySync registers event handlers on factory's admissionregistration
// v1 informers. Start the factory, wait for its caches, then call
// [PolicySync.Sync] once for the first evaluator.
func NewPolicySync(factory informers.SharedInformerFactory, opts SyncOptions) (*PolicySync, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.compile == nil {
		opts.compile = policy.Compile
	}
	v1 := factory.Admissionregistration().V1()
	s := &PolicySync{opts: opts, policies: v1.ValidatingAdmissionPolicies().Lister(), bindings: v1.ValidatingAdmissionPolicyBindings().Lister()}
	s.current.Store(&served{})
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.Changed() },
		UpdateFunc: func(any, any) { s.Changed() },
		DeleteFunc: func(any) { s.Changed() },
	}
	if _, err := v1.ValidatingAdmissionPolicies().Informer().AddEventHandler(h); err != nil {
		return nil, err
	}
	if _, err := v1.ValidatingAdmissionPolicyBindings().Informer().AddEventHandler(h); err != nil {
		return nil, err
	}
	return s, nil
}

// Current returns the evaluator being served and its generation (the
// number of successful compiles); nil and 0 before the first.
func (s *PolicySync) Current() (*policy.Evaluator, int64) {
	c := s.current.Load()
	return c.ev, c.gen
}

// Err returns the error of the last compile attempt, nil if it succeeded.
func (s *PolicySync) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// Changed schedules a recompile after the debounce delay unless one is
// already scheduled. The informers call it; call it yourself when
// something Options depend on changed.
func (s *PolicySync) Changed() {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	if s.pending {
		return
	}
	s.pending = true
	s.opts.Clock.AfterFunc(s.opts.Debounce, func() {
		s.pmu.Lock()
		s.pending = false
		s.pmu.Unlock()
		_ = s.Sync()
	})
}

// Sync compiles the policies and bindings the listers hold now and, on
// success, serves the result as the next generation.
func (s *PolicySync) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.policies.List(labels.Everything())
	if err != nil {
		return s.done(err)
	}
	bs, err := s.bindings.List(labels.Everything())
	if err != nil {
		return s.done(err)
	}
	// Listers return cache order; sort for reproducible issues.
	slices.SortFunc(ps, func(a, b *admissionregistrationv1.ValidatingAdmissionPolicy) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(bs, func(a, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) int {
		return cmp.Compare(a.Name, b.Name)
	})
	if s.opts.DryRun {
		bs = WarnInsteadOfDeny(bs)
	}
	ev, err := s.opts.compile(ps, bs, s.opts.Options)
	if err != nil {
		return s.done(err)
	}
	if ev == nil {
		return s.done(errors.New("compile returned no evaluator"))
	}
	next := &served{ev: ev, gen: s.current.Load().gen + 1}
	s.current.Store(next)
	s.opts.Logger.Info("policies compiled", "generation", next.gen, "policies", len(ps), "bindings", len(bs), "issues", len(ev.Issues()))
	return s.done(nil)
}

// done records the outcome of a compile attempt; s.mu is held.
func (s *PolicySync) done(err error) error {
	s.lastErr = err
	gen := s.current.Load().gen
	if err != nil {
		s.opts.Logger.Error("compile failed; still serving the previous policies", "generation", gen, "error", err)
	}
	s.opts.Metrics.reloaded(gen, err)
	if s.opts.OnSync != nil {
		s.opts.OnSync(gen, err)
	}
	return err
}

// WarnInsteadOfDeny returns copies of bindings whose Deny action is
// replaced by Warn, for dry-run (shadow) serving: each failing validation
// then produces the API server's "Validation failed for
// ValidatingAdmissionPolicy ..." warning. Bindings without Deny are
// returned as they are.
func WarnInsteadOfDeny(bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) []*admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	out := make([]*admissionregistrationv1.ValidatingAdmissionPolicyBinding, len(bindings))
	for i, b := range bindings {
		if b == nil || !slices.Contains(b.Spec.ValidationActions, admissionregistrationv1.Deny) {
			out[i] = b
			continue
		}
		c := b.DeepCopy()
		var actions []admissionregistrationv1.ValidationAction
		for _, a := range c.Spec.ValidationActions {
			if a == admissionregistrationv1.Deny {
				a = admissionregistrationv1.Warn
			}
			if !slices.Contains(actions, a) {
				actions = append(actions, a)
			}
		}
		c.Spec.ValidationActions = actions
		out[i] = c
	}
	return out
}
