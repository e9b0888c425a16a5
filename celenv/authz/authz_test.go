package authz_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/vapkit/vapkit/celenv/authz"
)

func TestCachingAuthorizer(t *testing.T) {
	type call struct {
		attrs authz.Attributes
		want  string // "decision/reason/error" of the answer
	}
	mustFields := func(s string) fields.Requirements {
		sel, err := fields.ParseSelector(s)
		if err != nil {
			t.Fatalf("fields.ParseSelector(%q) = %v", s, err)
		}
		return sel.Requirements()
	}
	mustLabels := func(s string) labels.Requirements {
		r, err := labels.ParseToRequirements(s)
		if err != nil {
			t.Fatalf("labels.ParseToRequirements(%q) = %v", s, err)
		}
		return r
	}
	named := authz.Attributes{Name: "test name"}
	withUser := func(u authenticationv1.UserInfo) authz.Attributes { return authz.Attributes{User: u} }
	withSel := func(f func(*authz.Attributes)) authz.Attributes {
		a := named
		f(&a)
		return a
	}
	tests := []struct {
		name  string
		calls []call // the backend answers misses with "Allow/r<n>/e<n>", n counting from 1
		hits  int    // number of backend calls expected
	}{{
		name:  "hit, errors included",
		calls: []call{{named, "Allow/r1/e1"}, {named, "Allow/r1/e1"}},
		hits:  1,
	}, {
		name: "hit with differently-ordered groups",
		calls: []call{
			{withUser(authenticationv1.UserInfo{Groups: []string{"a", "b", "c"}}), "Allow/r1/e1"},
			{withUser(authenticationv1.UserInfo{Groups: []string{"c", "b", "a"}}), "Allow/r1/e1"},
		},
		hits: 1,
	}, {
		name: "hit with differently-ordered extra",
		calls: []call{
			{withUser(authenticationv1.UserInfo{Extra: map[string]authenticationv1.ExtraValue{"k": {"a", "b", "c"}}}), "Allow/r1/e1"},
			{withUser(authenticationv1.UserInfo{Extra: map[string]authenticationv1.ExtraValue{"k": {"c", "b", "a"}}}), "Allow/r1/e1"},
		},
		hits: 1,
	}, {
		name: "miss due to different extra",
		calls: []call{
			{withUser(authenticationv1.UserInfo{Extra: map[string]authenticationv1.ExtraValue{"k": {"a"}}}), "Allow/r1/e1"},
			{withUser(authenticationv1.UserInfo{Extra: map[string]authenticationv1.ExtraValue{"j": {"a"}}}), "Allow/r2/e2"},
		},
		hits: 2,
	}, {
		name:  "miss due to different name",
		calls: []call{{authz.Attributes{Name: "alpha"}, "Allow/r1/e1"}, {authz.Attributes{Name: "beta"}, "Allow/r2/e2"}},
		hits:  2,
	}, {
		name: "miss due to different user",
		calls: []call{
			{withUser(authenticationv1.UserInfo{Username: "alpha"}), "Allow/r1/e1"},
			{withUser(authenticationv1.UserInfo{Username: "beta"}), "Allow/r2/e2"},
		},
		hits: 2,
	}, {
		name: "miss due to different uid",
		calls: []call{
			{withUser(authenticationv1.UserInfo{UID: "1"}), "Allow/r1/e1"},
			{withUser(authenticationv1.UserInfo{UID: "2"}), "Allow/r2/e2"},
		},
		hits: 2,
	}, {
		name: "miss due to each attribute",
		calls: []call{
			{authz.Attributes{}, "Allow/r1/e1"},
			{authz.Attributes{Verb: "get"}, "Allow/r2/e2"},
			{authz.Attributes{ResourceRequest: true}, "Allow/r3/e3"},
			{authz.Attributes{Path: "/x"}, "Allow/r4/e4"},
			{authz.Attributes{APIGroup: "x"}, "Allow/r5/e5"},
			{authz.Attributes{APIVersion: "x"}, "Allow/r6/e6"},
			{authz.Attributes{Resource: "x"}, "Allow/r7/e7"},
			{authz.Attributes{Subresource: "x"}, "Allow/r8/e8"},
			{authz.Attributes{Namespace: "x"}, "Allow/r9/e9"},
			{authz.Attributes{Verb: "get"}, "Allow/r2/e2"},
		},
		hits: 9,
	}, {
		name: "honor good field selector",
		calls: []call{
			{withSel(func(a *authz.Attributes) { a.FieldSelector = mustFields("foo=bar") }), "Allow/r1/e1"},
			{named, "Allow/r2/e2"},
			{withSel(func(a *authz.Attributes) { a.FieldSelector = mustFields("foo=bar") }), "Allow/r1/e1"},
		},
		hits: 2,
	}, {
		name: "ignore malformed field selector first",
		calls: []call{
			{withSel(func(a *authz.Attributes) { a.FieldSelectorErr = errors.New("malformed") }), "Allow/r1/e1"},
			{named, "Allow/r1/e1"},
		},
		hits: 1,
	}, {
		name: "ignore malformed field selector second",
		calls: []call{
			{named, "Allow/r1/e1"},
			{withSel(func(a *authz.Attributes) { a.FieldSelectorErr = errors.New("malformed") }), "Allow/r1/e1"},
		},
		hits: 1,
	}, {
		name: "honor good label selector",
		calls: []call{
			{withSel(func(a *authz.Attributes) { a.LabelSelector = mustLabels("foo=bar") }), "Allow/r1/e1"},
			{named, "Allow/r2/e2"},
			{withSel(func(a *authz.Attributes) { a.LabelSelector = mustLabels("foo=bar") }), "Allow/r1/e1"},
			{withSel(func(a *authz.Attributes) { a.LabelSelector = mustLabels("diff=zero") }), "Allow/r3/e3"},
		},
		hits: 3,
	}, {
		name: "ignore malformed label selector first",
		calls: []call{
			{withSel(func(a *authz.Attributes) { a.LabelSelectorErr = errors.New("malformed mess") }), "Allow/r1/e1"},
			{named, "Allow/r1/e1"},
		},
		hits: 1,
	}, {
		name: "ignore malformed label selector second",
		calls: []call{
			{named, "Allow/r1/e1"},
			{withSel(func(a *authz.Attributes) { a.LabelSelectorErr = errors.New("malformed mess") }), "Allow/r1/e1"},
		},
		hits: 1,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := 0
			backend := authz.AuthorizerFunc(func(context.Context, authz.Attributes) (authz.Result, error) {
				n++
				return authz.Result{Decision: authz.Allow, Reason: fmt.Sprintf("r%d", n)}, fmt.Errorf("e%d", n)
			})
			c := authz.NewCaching(backend)
			for i, call := range tc.calls {
				res, err := c.Authorize(t.Context(), call.attrs)
				got := fmt.Sprintf("%v/%s/%v", res.Decision, res.Reason, err)
				if got != call.want {
					t.Errorf("call %d: Authorize() = %s, want %s", i, got, call.want)
				}
			}
			if n != tc.hits {
				t.Errorf("backend calls = %d, want %d", n, tc.hits)
			}
		})
	}
}

func TestCachingAuthorizerNil(t *testing.T) {
	if got := authz.NewCaching(nil); got != nil {
		t.Errorf("NewCachingAuthorizer(nil) = %v, want nil", got)
	}
}

func TestAuthzDecisionText(t *testing.T) {
	tests := []struct {
		d    authz.Decision
		want string
	}{
		{authz.Deny, "Deny"},
		{authz.Allow, "Allow"},
		{authz.NoOpinion, "NoOpinion"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.d.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			b, err := tc.d.MarshalText()
			if err != nil || string(b) != tc.want {
				t.Errorf("MarshalText() = %q, %v; want %q", b, err, tc.want)
			}
			var back authz.Decision
			if err := back.UnmarshalText(b); err != nil || back != tc.d {
				t.Errorf("UnmarshalText(%q) = %v, %v; want %v", b, back, err, tc.d)
			}
		})
	}
	if got := authz.Decision(7).String(); got != "Unknown (7)" {
		t.Errorf("String() = %q, want %q", got, "Unknown (7)")
	}
	if _, err := authz.Decision(7).MarshalText(); err == nil {
		t.Errorf("MarshalText(7) = nil error, want an error")
	}
	var d authz.Decision
	if err := d.UnmarshalText([]byte("allow")); err == nil || !strings.Contains(err.Error(), "invalid authorization decision") {
		t.Errorf("UnmarshalText(allow) = %v, want an invalid decision error", err)
	}
}
