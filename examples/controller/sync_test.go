package controller

import (
	"errors"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

func replicaObjects(t *testing.T, limit string) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	m, err := manifest.Load([]byte(strings.ReplaceAll(replicaPolicy, "LIMIT", limit)), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return m.Policies[0], m.Bindings[0]
}

// TestPolicySyncDebounce checks with an injected clock that a burst of
// changes compiles once, after the debounce delay, and that a failed
// compile keeps the previous evaluator.
func TestPolicySyncDebounce(t *testing.T) {
	p, b := replicaObjects(t, "3")
	client := fake.NewClientset(p, b)
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	compiles := 0
	var fail error
	s, err := NewPolicySync(factory, SyncOptions{
		Clock: clk, Debounce: time.Second,
		Options: policy.Options{Namespaces: assumedNamespaces(nil)},
		compile: func(ps []*admissionregistrationv1.ValidatingAdmissionPolicy, bs []*admissionregistrationv1.ValidatingAdmissionPolicyBinding, o policy.Options) (*policy.Evaluator, error) {
			compiles++
			if fail != nil {
				return nil, fail
			}
			return policy.Compile(ps, bs, o)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Fill the listers without running the informers: the test drives the
	// events itself.
	v1 := factory.Admissionregistration().V1()
	if err := v1.ValidatingAdmissionPolicies().Informer().GetIndexer().Add(p); err != nil {
		t.Fatal(err)
	}
	if err := v1.ValidatingAdmissionPolicyBindings().Informer().GetIndexer().Add(b); err != nil {
		t.Fatal(err)
	}
	if ev, gen := s.Current(); ev != nil || gen != 0 {
		t.Fatalf("Current() before any compile = %v, %d; want nil, 0", ev, gen)
	}

	for range 3 {
		s.Changed()
	}
	clk.Step(999 * time.Millisecond)
	if compiles != 0 {
		t.Fatalf("compiles before the delay = %d, want 0", compiles)
	}
	s.Changed() // joins the pending recompile
	clk.Step(time.Millisecond)
	if compiles != 1 {
		t.Fatalf("compiles after a burst of 4 changes = %d, want 1", compiles)
	}
	if ok, gen := decide(t, s, 5); ok || gen != 1 {
		t.Fatalf("generation %d allows 5 = %t, want generation 1 denying", gen, ok)
	}
	if clk.HasWaiters() {
		t.Errorf("a recompile is still scheduled after it ran")
	}

	// A failing compile keeps generation 1.
	fail = errors.New("boom")
	s.Changed()
	clk.Step(time.Second)
	if compiles != 2 || s.Err() == nil {
		t.Fatalf("compiles = %d, Err() = %v; want 2 and the failure", compiles, s.Err())
	}
	if ok, gen := decide(t, s, 5); ok || gen != 1 {
		t.Fatalf("after a failed compile: generation %d allows 5 = %t, want generation 1 still denying", gen, ok)
	}
}

// TestPolicySyncInformers checks the sync end to end with a fake
// clientset: a change made through the API reaches the evaluator. It
// waits for OnSync, not for time.
func TestPolicySyncInformers(t *testing.T) {
	p, b := replicaObjects(t, "3")
	client := fake.NewClientset(p, b)
	// The fake clientset does not replay what happens between an
	// informer's list and its watch: wait until both watches are set up.
	watching := make(chan struct{}, 4)
	client.PrependWatchReactor("*", func(k8stesting.Action) (bool, watch.Interface, error) {
		watching <- struct{}{}
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	synced := make(chan int64, 64)
	s, err := NewPolicySync(factory, SyncOptions{
		Debounce: time.Millisecond,
		Options:  policy.Options{Namespaces: assumedNamespaces(nil)},
		OnSync:   func(gen int64, err error) { synced <- gen },
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	defer factory.Shutdown() // after close(stop), deferred below
	defer close(stop)
	factory.WaitForCacheSync(stop)
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := decide(t, s, 5); ok {
		t.Fatalf("5 replicas allowed with limit 3")
	}
	<-watching
	<-watching
	p7, _ := replicaObjects(t, "7")
	p7.ResourceVersion = "2"
	if _, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Update(t.Context(), p7, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case <-synced:
		case <-time.After(time.Minute): // a guard, not a wait: the loop ends on an event
			t.Fatalf("the update never reached the evaluator")
		}
		if ok, _ := decide(t, s, 5); ok {
			break // the update arrived
		}
	}
}
