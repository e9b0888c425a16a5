package celenv_test

import (
	"context"
	"testing"

	"github.com/google/cel-go/cel"
	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/celenv/authz"
	"github.com/vapkit/vapkit/internal/celbridge"
)

// evalAt evaluates expr in the StoredExpressions environment of version v,
// with the authorizer bound to a.
func evalAt(t *testing.T, v celenv.Version, expr string, a authz.Authorizer) any {
	t.Helper()
	env, err := celenv.New(celenv.Options{Version: v})
	if err != nil {
		t.Fatalf("New(%v) = %v", v, err)
	}
	ce := celbridge.Env(env, false, false, true)
	ast, iss := ce.Compile(expr)
	if iss.Err() != nil {
		t.Fatalf("%v: Compile(%q) = %v", v, expr, iss.Err())
	}
	prg, err := ce.Program(ast, celbridge.ProgramOptions(env)...)
	if err != nil {
		t.Fatalf("%v: Program(%q) = %v", v, expr, err)
	}
	authorizer, _ := celenv.AuthorizerValues(t.Context(), a, authenticationv1.UserInfo{Username: "alice"}, authz.RequestResource{})
	act := map[string]any{"authorizer": authorizer}
	out, _, err := prg.Eval(act)
	if err != nil {
		t.Fatalf("%v: Eval(%q) = %v", v, expr, err)
	}
	return out.Value()
}

// TestDriftContainsCIDR: before 1.32, containsCIDR compared the masked
// receiver with the argument's unmasked address at the receiver's length.
func TestDriftContainsCIDR(t *testing.T) {
	tests := []struct {
		expr         string
		before, from bool // result before 1.32 and from 1.32
	}{
		{expr: "cidr('10.0.0.0/8').containsCIDR('10.0.0.0/16')", before: true, from: true},
		{expr: "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')", before: false, from: true},
		{expr: "cidr('10.0.0.0/8').containsCIDR(cidr('10.1.2.3/16'))", before: false, from: true},
		{expr: "cidr('10.1.2.3/8').containsCIDR('10.0.0.0/16')", before: true, from: true},
		{expr: "cidr('10.0.0.0/16').containsCIDR('10.0.0.0/8')", before: false, from: false},
		{expr: "cidr('10.0.0.0/8').containsCIDR('11.0.0.0/16')", before: false, from: false},
	}
	for _, tc := range tests {
		for _, v := range []celenv.Version{celenv.Version1_30, celenv.Version1_31, celenv.Version1_32, celenv.Version1_37} {
			want := tc.from
			if v < celenv.Version1_32 {
				want = tc.before
			}
			if got := evalAt(t, v, tc.expr, nil); got != want {
				t.Errorf("%v: %s = %v, want %v", v, tc.expr, got, want)
			}
		}
	}
}

// TestDriftAuthzSelectors: a 1.31 API server accepts field and label
// selectors on resource checks but, its AuthorizeWithSelectors feature
// gate being off by default, never passes them to the authorizer.
func TestDriftAuthzSelectors(t *testing.T) {
	const expr = "authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n1').labelSelector('app=x').check('list').allowed()"
	for _, v := range []celenv.Version{celenv.Version1_31, celenv.Version1_32, celenv.Version1_37} {
		var got authz.Attributes
		a := authz.AuthorizerFunc(func(_ context.Context, attrs authz.Attributes) (authz.Result, error) {
			got = attrs
			return authz.Result{Decision: authz.Allow}, nil
		})
		if out := evalAt(t, v, expr, a); out != true {
			t.Fatalf("%v: %s = %v, want true", v, expr, out)
		}
		wantSelectors := v >= celenv.Version1_32
		if has := len(got.FieldSelector) == 1 && len(got.LabelSelector) == 1; has != wantSelectors {
			t.Errorf("%v: authorizer saw field %v and label %v selectors; want them: %v", v, got.FieldSelector, got.LabelSelector, wantSelectors)
		}
	}
}

// TestDriftResultTypeMessage: before 1.32 a wrong result type was reported
// without the type found.
func TestDriftResultTypeMessage(t *testing.T) {
	for _, tc := range []struct {
		v    celenv.Version
		want string
	}{
		{celenv.Version1_30, "must evaluate to bool"},
		{celenv.Version1_31, "must evaluate to bool"},
		{celenv.Version1_32, "must evaluate to bool but got int"},
		{celenv.Version1_37, "must evaluate to bool but got int"},
	} {
		env, err := celenv.New(celenv.Options{Version: tc.v})
		if err != nil {
			t.Fatalf("New(%v) = %v", tc.v, err)
		}
		p := env.NewScope(celenv.ScopeOptions{}).Compile("1", celenv.Decls{}, cel.BoolType)
		if p.Err() == nil || p.Err().Detail != tc.want {
			t.Errorf("%v: Compile(1) error = %v, want %q", tc.v, p.Err(), tc.want)
		}
	}
}

// TestDriftListsRange: 1.34 to 1.36 are built with cel-go v0.26.0, whose
// lists.range has no size limit and gives [] for a negative size; 1.37's
// cel-go v0.29.2 refuses both. Over 1,000,000 elements the older servers
// end in the per-expression cost limit, even where || would absorb an
// error.
func TestDriftListsRange(t *testing.T) {
	const cancelled = "operation cancelled: actual cost limit exceeded"
	tests := []struct {
		expr             string
		before, from     any    // result before 1.37 and from 1.37
		beforeErr, frErr string // evaluation error before 1.37 and from 1.37
	}{
		{expr: "lists.range(3) == [0, 1, 2]", before: true, from: true},
		{expr: "lists.range(-2) == []", before: true, frErr: "lists.range: size must be non-negative, got -2"},
		{expr: "lists.range(1100000).size() > 0", beforeErr: cancelled,
			frErr: "lists.range: size 1100000 exceeds maximum allowed (1000000)"},
		{expr: "lists.range(1100000).size() > 0 || true", beforeErr: cancelled, from: true},
	}
	for _, tc := range tests {
		for _, v := range []celenv.Version{celenv.Version1_34, celenv.Version1_35, celenv.Version1_36, celenv.Version1_37} {
			want, wantErr := tc.before, tc.beforeErr
			if v >= celenv.Version1_37 {
				want, wantErr = tc.from, tc.frErr
			}
			env, err := celenv.New(celenv.Options{Version: v})
			if err != nil {
				t.Fatalf("New(%v) = %v", v, err)
			}
			ce := celbridge.Env(env, false, false, false)
			ast, iss := ce.Compile(tc.expr)
			if iss.Err() != nil {
				t.Fatalf("%v: Compile(%q) = %v", v, tc.expr, iss.Err())
			}
			prg, err := ce.Program(ast, celbridge.ProgramOptions(env)...)
			if err != nil {
				t.Fatalf("%v: Program(%q) = %v", v, tc.expr, err)
			}
			out, _, err := prg.Eval(cel.NoVars())
			switch {
			case wantErr != "":
				if err == nil || err.Error() != wantErr {
					t.Errorf("%v: %s = %v, %v; want error %q", v, tc.expr, out, err, wantErr)
				}
			case err != nil:
				t.Errorf("%v: %s: %v; want %v", v, tc.expr, err, want)
			case out.Value() != want:
				t.Errorf("%v: %s = %v, want %v", v, tc.expr, out.Value(), want)
			}
		}
	}
}
