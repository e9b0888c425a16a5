package policy_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/celenv/authz"
	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

const goroutines = 64

// TestEvaluateConcurrent shares each case's Evaluator among 64 goroutines
// and checks, under -race, that every Decision equals the serial one.
func TestEvaluateConcurrent(t *testing.T) {
	cases := fuzzCases(t)
	want := make([]*policy.Decision, len(cases))
	for i, tc := range cases {
		d, err := tc.ev.Evaluate(t.Context(), tc.req)
		if err != nil {
			t.Fatalf("%s: Evaluate() error = %v", tc.name, err)
		}
		want[i] = d
	}
	// Each goroutine evaluates every 8th case, so each case is evaluated
	// by 8 goroutines at once while the run stays short under -race.
	var wg sync.WaitGroup
	errs := make(chan string, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for i := g % 8; i < len(cases); i += 8 {
				d, err := cases[i].ev.Evaluate(context.Background(), cases[i].req)
				if err != nil {
					errs <- fmt.Sprintf("%s: Evaluate() error = %v", cases[i].name, err)
					return
				}
				if diff := cmp.Diff(want[i], d, decisionOpts); diff != "" {
					errs <- fmt.Sprintf("%s: concurrent Evaluate() differs from serial (-serial +concurrent):\n%s", cases[i].name, diff)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestPluginsConcurrent checks that the params Source, NamespaceGetter and
// Authorizer are called concurrently by one Evaluator and that decisions do
// not depend on the interleaving.
func TestPluginsConcurrent(t *testing.T) {
	var inFlight, maxInFlight, calls atomic.Int64
	enter := func() func() {
		calls.Add(1)
		n := inFlight.Add(1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(100 * time.Microsecond)
		return func() { inFlight.Add(-1) }
	}
	src := params.SourceFunc(func(ctx context.Context, q params.Query) ([]runtime.Object, error) {
		defer enter()()
		return []runtime.Object{&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "limits", "namespace": "default"},
			"data":     map[string]any{"max": "5"},
		}}}, nil
	})
	nss := matching.NamespaceGetterFunc(func(ctx context.Context, name string) (*corev1.Namespace, error) {
		defer enter()()
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": "prod"}}}, nil
	})
	authz := authz.AuthorizerFunc(func(ctx context.Context, a authz.Attributes) (authz.Result, error) {
		defer enter()()
		if a.User.Username == "alice" {
			return authz.Result{Decision: authz.Allow}, nil
		}
		return authz.Result{Decision: authz.Deny}, nil
	})
	p := vap("p", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
		s.MatchConstraints.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
		s.Validations = validations(
			"object.spec.replicas <= int(params.data.max)",
			"authorizer.group('apps').resource('deployments').check('scale').allowed()",
			"namespaceObject.metadata.labels.env == 'prod'",
		)
	})
	b := bind("b", "p")
	b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Name: "limits", ParameterNotFoundAction: ptr(admissionregistrationv1.DenyAction)}
	ev := mustCompile(t, []*admissionregistrationv1.ValidatingAdmissionPolicy{p},
		[]*admissionregistrationv1.ValidatingAdmissionPolicyBinding{b},
		policy.Options{Params: src, Namespaces: nss, Authorizer: authz})

	request := func(user string, replicas int64) *policy.Request {
		r := deployRequest(map[string]any{"spec": map[string]any{"replicas": replicas}})
		r.Namespace = "default"
		r.UserInfo.Username = user
		return r
	}
	reqs := []*policy.Request{request("alice", 3), request("bob", 3), request("alice", 9)}
	want := make([]*policy.Decision, len(reqs))
	for i, r := range reqs {
		d, err := ev.Evaluate(t.Context(), r)
		if err != nil {
			t.Fatalf("Evaluate() error = %v", err)
		}
		want[i] = d
	}
	if !want[0].Allowed || want[1].Allowed || want[2].Allowed {
		t.Fatalf("serial decisions allowed = %v, %v, %v, want true, false, false", want[0].Allowed, want[1].Allowed, want[2].Allowed)
	}
	calls.Store(0)
	var wg sync.WaitGroup
	errs := make(chan string, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for k := range 3 {
				i := (g + k) % len(reqs)
				d, err := ev.Evaluate(context.Background(), reqs[i])
				if err != nil {
					errs <- fmt.Sprintf("Evaluate() error = %v", err)
					return
				}
				if diff := cmp.Diff(want[i], d, decisionOpts); diff != "" {
					errs <- fmt.Sprintf("request %d: concurrent Evaluate() differs (-serial +concurrent):\n%s", i, diff)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if calls.Load() == 0 || maxInFlight.Load() < 2 {
		t.Errorf("plug-ins called %d times, at most %d at once; want concurrent calls", calls.Load(), maxInFlight.Load())
	}
}

// TestCandidatesMemo evaluates one Evaluator on requests for many
// resources, more than its memo of candidate policies holds, and checks
// that each request still sees exactly the policies for its resource.
func TestCandidatesMemo(t *testing.T) {
	doc := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: deletes
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["example.com"]
      apiVersions: ["v1"]
      operations: ["DELETE"]
      resources: ["r7", "r1500"]
  validations:
  - expression: "false"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: deletes
spec:
  policyName: deletes
  validationActions: [Deny]
`
	m, err := manifest.Load([]byte(doc), "memo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := policy.Compile(m.Policies, m.Bindings, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		for i := range 2000 {
			res := fmt.Sprintf("r%d", i)
			req := &policy.Request{
				Operation: "DELETE", Name: "x", Namespace: "default",
				Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: res},
				Kind:     schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "R"},
			}
			d, err := ev.Evaluate(t.Context(), req)
			if err != nil {
				t.Fatalf("round %d, %s: %v", round, res, err)
			}
			if want := i != 7 && i != 1500; d.Allowed != want {
				t.Fatalf("round %d, %s: Allowed = %v, want %v", round, res, d.Allowed, want)
			}
		}
	}
}
