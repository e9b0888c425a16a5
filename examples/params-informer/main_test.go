package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &out); err != nil {
		t.Fatalf("run() error = %v", err)
	}
	const notFound = "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
	want := strings.Join([]string{
		`initial sync                team-a/web: allowed`,
		`initial sync                team-a/api: denied: deployments.apps "api" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: at most 3 replicas in team-a`,
		`initial sync                team-b/web: denied: deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: ` + notFound,
		`team-a limit raised to 10   team-a/api: allowed`,
		`team-b limit added          team-b/web: denied: deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: at most 2 replicas in team-b`,
		`team-a limit deleted        team-a/api: denied: deployments.apps "api" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: ` + notFound,
	}, "\n") + "\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("run() output mismatch (-want +got):\n%s", diff)
	}
}

func labelled(namespace, name string, l map[string]any) *unstructured.Unstructured {
	u := limitConfigMap(namespace, "1")
	u.SetName(name)
	u.Object["metadata"].(map[string]any)["labels"] = l
	return u
}

func TestParamSource(t *testing.T) {
	c := newObjectCache()
	c.upsert(labelled("a", "one", map[string]any{"tier": "gold"}))
	c.upsert(labelled("a", "two", map[string]any{"tier": "silver"}))
	c.upsert(labelled("b", "three", map[string]any{"tier": "gold"}))
	src := paramSource(c)
	gold := labels.SelectorFromSet(labels.Set{"tier": "gold"})
	tests := []struct {
		name         string
		q            params.Query
		want         []string
		wantNotFound bool
	}{
		{"by name", params.Query{Kind: configMapKind, Namespace: "a", Name: "two"}, []string{"a/two"}, false},
		{"missing name", params.Query{Kind: configMapKind, Namespace: "b", Name: "two"}, nil, true},
		{"selector in namespace", params.Query{Kind: configMapKind, Namespace: "a", Selector: gold}, []string{"a/one"}, false},
		{"everything in namespace", params.Query{Kind: configMapKind, Namespace: "a", Selector: labels.Everything()}, []string{"a/one", "a/two"}, false},
		{"other kind", params.Query{Kind: configMapKind.GroupVersion().WithKind("Secret"), Namespace: "a", Selector: labels.Everything()}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := src.Find(t.Context(), tc.q)
			if tc.wantNotFound {
				if !errors.IsNotFound(err) {
					t.Errorf("Find(%v) error = %v, want NotFound", tc.q, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Find(%v) error = %v", tc.q, err)
			}
			var got []string
			for _, o := range objs {
				u := o.(*unstructured.Unstructured)
				got = append(got, u.GetNamespace()+"/"+u.GetName())
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("Find(%v) mismatch (-want +got):\n%s", tc.q, diff)
			}
		})
	}
}

// TestConcurrentUpdates evaluates while the cache changes underneath; run
// with -race. Every decision must follow one of the limits written.
func TestConcurrentUpdates(t *testing.T) {
	m, err := manifest.Load(policyYAML, "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := newObjectCache()
	c.upsert(namespace("team-a"))
	c.upsert(limitConfigMap("team-a", "1"))
	ev, err := policy.Compile(m.Policies, m.Bindings, policy.Options{Params: paramSource(c), Namespaces: namespaceSource(c)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for i := 0; ctx.Err() == nil; i++ {
			c.upsert(limitConfigMap("team-a", fmt.Sprint(1+i%2*9))) // 1 or 10
		}
	}()
	var readers sync.WaitGroup
	for range 4 {
		readers.Go(func() {
			for range 50 {
				d, err := ev.Evaluate(t.Context(), createDeployment("team-a", "web", 5))
				if err != nil {
					t.Errorf("Evaluate() error = %v", err)
					return
				}
				if !d.Allowed && !strings.HasSuffix(d.Status.Message, "at most 1 replicas in team-a") {
					t.Errorf("Evaluate() denied with %q, want the limit of 1", d.Status.Message)
				}
			}
		})
	}
	readers.Wait()
	cancel()
	<-writerDone
}
