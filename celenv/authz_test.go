package celenv_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/celenv/authz"
	"github.com/vapkit/vapkit/celenv/internal/library"
	"github.com/vapkit/vapkit/policy/casefile"
)

// newAuthzEnv is the environment of upstream's authz tests plus the
// authorizer.requestResource variable.
func newAuthzEnv(t *testing.T) *cel.Env {
	t.Helper()
	env, err := cel.NewEnv(append(celenv.AuthzLibraries(true),
		cel.CostEstimatorOptions(checker.PresenceTestHasCost(false)))...)
	if err != nil {
		t.Fatalf("cel.NewEnv() = %v", err)
	}
	return env
}

type authzEval struct {
	val  ref.Val
	cost uint64
	err  error
}

// evalAuthz compiles and runs expr with the VAP program options against a
// and user; the request resource is deployments/scale "web" in "team-a".
func evalAuthz(t *testing.T, env *cel.Env, expr string, a authz.Authorizer, user authenticationv1.UserInfo) authzEval {
	t.Helper()
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		t.Fatalf("Compile(%q) = %v", expr, iss.Err())
	}
	prg, err := env.Program(ast,
		cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost),
		cel.CostLimit(1000000),
		cel.CostTrackerOptions(interpreter.PresenceTestHasCost(false)),
		cel.CostTracking(&library.CostEstimator{}),
	)
	if err != nil {
		t.Fatalf("Program(%q) = %v", expr, err)
	}
	ctx := t.Context()
	authorizer, requestResource := celenv.AuthorizerValues(ctx, a, user, authz.RequestResource{
		Group: "apps", Resource: "deployments", Subresource: "scale", Namespace: "team-a", Name: "web",
	})
	out, det, err := prg.ContextEval(ctx, map[string]any{
		"authorizer":                 authorizer,
		"authorizer.requestResource": requestResource,
	})
	var cost uint64
	if det != nil && det.ActualCost() != nil {
		cost = *det.ActualCost()
	}
	return authzEval{val: out, cost: cost, err: err}
}

var (
	alice = authenticationv1.UserInfo{Username: "alice", UID: "a-1", Groups: []string{"devs", "system:authenticated"}}

	testRules = casefile.RuleAuthorizer{
		{User: "alice", Path: "/healthz", Verb: "get", Decision: authz.Allow, Reason: "health is public"},
		{User: "alice", Path: "/logs/*", Decision: authz.Allow},
		{User: "alice", Resource: "pods", Verb: "list", Decision: authz.NoOpinion, Error: "webhook down"},
		{User: "alice", APIGroup: "apps", Resource: "deployments", Subresource: "scale", Namespace: "team-a", Name: "web",
			Verb: "update", Decision: authz.Allow, Reason: "owner"},
		{User: "system:serviceaccount:kube-system:deployer", Groups: []string{"system:serviceaccounts:kube-system"},
			Verb: "create", Decision: authz.Allow, Reason: "deployer"},
		{Resource: "secrets", Decision: authz.Deny, Reason: "no secrets"},
	}
)

func TestAuthzFunctions(t *testing.T) {
	// Every expression must evaluate to true.
	tests := []string{
		// path checks
		"authorizer.path('/healthz').check('get').allowed()",
		"authorizer.path('/healthz').check('get').reason() == 'health is public'",
		"!authorizer.path('/healthz').check('get').errored()",
		"authorizer.path('/healthz').check('get').error() == ''",
		"!authorizer.path('/healthz').check('post').allowed()",
		"authorizer.path('/healthz').check('post').reason() == ''",
		"authorizer.path('/logs/kubelet.log').check('get').allowed()",
		"!authorizer.path('/metrics').check('get').allowed()",
		"!authorizer.path('healthz').check('get').allowed()",
		// resource checks
		"authorizer.group('apps').resource('deployments').subresource('scale').namespace('team-a').name('web').check('update').allowed()",
		"authorizer.group('apps').resource('deployments').subresource('scale').namespace('team-a').name('web').check('update').reason() == 'owner'",
		"!authorizer.group('apps').resource('deployments').namespace('team-a').name('web').check('update').allowed()",
		"!authorizer.group('apps').resource('deployments').subresource('scale').namespace('team-a').name('web').check('get').allowed()",
		"!authorizer.group('').resource('deployments').subresource('scale').namespace('team-a').name('web').check('update').allowed()",
		// refinements can be reset and overwritten
		"authorizer.group('apps').resource('deployments').subresource('status').subresource('scale').namespace('x').namespace('team-a').name('web').check('update').allowed()",
		// errors reported by the authorizer are data, not CEL errors
		"authorizer.group('').resource('pods').check('list').errored()",
		"authorizer.group('').resource('pods').check('list').error() == 'webhook down'",
		"!authorizer.group('').resource('pods').check('list').allowed()",
		"!authorizer.group('').resource('pods').check('get').errored()",
		"authorizer.group('').resource('secrets').check('get').reason() == 'no secrets'",
		"!authorizer.group('').resource('secrets').check('get').allowed()",
		// selectors, well-formed or not, never fail the expression
		"authorizer.group('').resource('secrets').fieldSelector('metadata.name=x').labelSelector('a=b').check('list').reason() == 'no secrets'",
		"authorizer.group('').resource('secrets').fieldSelector('a badop b').labelSelector('a badop b').check('list').reason() == 'no secrets'",
		// the request's own resource
		"authorizer.requestResource.check('update').allowed()",
		"authorizer.requestResource.check('update').reason() == 'owner'",
		"!authorizer.requestResource.subresource('').check('update').allowed()",
		"!authorizer.requestResource.check('delete').allowed()",
		// service accounts replace the user
		"authorizer.serviceAccount('kube-system', 'deployer').group('apps').resource('deployments').check('create').allowed()",
		"authorizer.serviceAccount('kube-system', 'deployer').path('/anything').check('create').reason() == 'deployer'",
		"!authorizer.serviceAccount('default', 'deployer').group('apps').resource('deployments').check('create').allowed()",
		"!authorizer.serviceAccount('kube-system', 'deployer').path('/healthz').check('get').allowed()",
		"authorizer.serviceAccount('kube-system', 'deployer').serviceAccount('kube-system', 'deployer').path('/x').check('create').allowed()",
		"authorizer.serviceAccount('a', 'b.c-d').path('/x').check('get').reason() == ''",
		// values are usable in comprehensions and conditionals
		"['get', 'post'].exists(v, authorizer.path('/healthz').check(v).allowed())",
		"(true ? authorizer.path('/healthz') : authorizer.path('/metrics')).check('get').allowed()",
		// Equality other than == itself follows from Equal failing, as
		// upstream: != is true, membership false, list equality true.
		"authorizer != null",
		"!(authorizer == null)",
		"authorizer != authorizer",
		"authorizer.path('/a').check('get') != authorizer.path('/a').check('get')",
		"!(authorizer in [authorizer])",
		"[authorizer] == [authorizer]",
		"{authorizer: 1}.size() == 1",
		"{authorizer.requestResource: 1, authorizer.path('/x').check('get'): 2}.size() == 2",
	}
	env := newAuthzEnv(t)
	for _, expr := range tests {
		t.Run(expr, func(t *testing.T) {
			t.Parallel()
			got := evalAuthz(t, env, expr, testRules, alice)
			if got.err != nil || got.val != types.True {
				t.Errorf("Eval(%q) = %v, %v; want true, nil", expr, got.val, got.err)
			}
		})
	}
}

func TestAuthzErrors(t *testing.T) {
	tests := []struct {
		name string
		expr string
		want string
	}{
		{"empty path", "authorizer.path('')", "path must not be empty"},
		{"blank path", "authorizer.path('  ')", "path must not be empty"},
		{"empty resource", "authorizer.group('apps').resource('')", "resource must not be empty"},
		{"blank resource", "authorizer.group('apps').resource(' \\t')", "resource must not be empty"},
		{"bad sa name", "authorizer.serviceAccount('default', 'invalid@*name')", "Invalid service account name"},
		{"empty sa name", "authorizer.serviceAccount('default', '')", "Invalid service account name"},
		{"bad sa namespace", "authorizer.serviceAccount('not@a#valid!namespace', 'validname')", "Invalid service account namespace"},
		{"dotted sa namespace", "authorizer.serviceAccount('valid.example.com', 'validname')", "Invalid service account namespace"},
		{"name validated first", "authorizer.serviceAccount('bad ns', 'bad name')", "Invalid service account name"},
		{"authorizer equality", "authorizer == authorizer", "no such overload"},
		{"path check equality", "authorizer.path('/a') == authorizer.path('/a')", "no such overload"},
		{"group check equality", "authorizer.group('') == authorizer.group('')", "no such overload"},
		{"resource check equality", "authorizer.requestResource == authorizer.requestResource", "no such overload"},
		{"decision equality", "authorizer.path('/a').check('get') == authorizer.path('/a').check('get')", "no such overload"},
	}
	env := newAuthzEnv(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := evalAuthz(t, env, tc.expr, testRules, alice)
			if got.err == nil || got.err.Error() != tc.want {
				t.Errorf("Eval(%q) error = %v, want %q", tc.expr, got.err, tc.want)
			}
		})
	}
}

// attrs is the comparable form of AuthzAttributes.
type attrs struct {
	User                                                      authenticationv1.UserInfo
	Verb                                                      string
	ResourceRequest                                           bool
	Path, APIGroup, APIVersion, Resource, Subresource, NS, Nm string
	FieldSelector                                             fields.Requirements
	FieldSelectorErr                                          bool
	LabelSelector                                             string
	LabelSelectorErr                                          bool
}

func toAttrs(a authz.Attributes) attrs {
	out := attrs{
		User: a.User, Verb: a.Verb, ResourceRequest: a.ResourceRequest, Path: a.Path,
		APIGroup: a.APIGroup, APIVersion: a.APIVersion, Resource: a.Resource,
		Subresource: a.Subresource, NS: a.Namespace, Nm: a.Name,
		FieldSelector: a.FieldSelector, FieldSelectorErr: a.FieldSelectorErr != nil,
		LabelSelectorErr: a.LabelSelectorErr != nil,
	}
	if a.LabelSelector != nil {
		out.LabelSelector = a.LabelSelector.String()
	}
	return out
}

func TestAuthzAttributes(t *testing.T) {
	sa := authenticationv1.UserInfo{
		Username: "system:serviceaccount:default:test-sa",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:default"},
	}
	tests := []struct {
		name string
		expr string
		want attrs
	}{{
		name: "path",
		expr: "authorizer.path('/healthz').check('get')",
		want: attrs{User: alice, Verb: "get", Path: "/healthz"},
	}, {
		name: "path kept verbatim",
		expr: "authorizer.path(' healthz').check('GET')",
		want: attrs{User: alice, Verb: "GET", Path: " healthz"},
	}, {
		name: "core group resource",
		expr: "authorizer.group('').resource('endpoints').check('create')",
		want: attrs{User: alice, Verb: "create", ResourceRequest: true, APIVersion: "*", Resource: "endpoints"},
	}, {
		name: "all fields",
		expr: "authorizer.group('apps').resource('deployments').fieldSelector('foo=bar').labelSelector('apple=banana').subresource('status').namespace('test').name('backend').check('create')",
		want: attrs{
			User: alice, Verb: "create", ResourceRequest: true, APIGroup: "apps", APIVersion: "*",
			Resource: "deployments", Subresource: "status", NS: "test", Nm: "backend",
			FieldSelector: fields.Requirements{{Operator: "=", Field: "foo", Value: "bar"}},
			LabelSelector: "apple=banana",
		},
	}, {
		name: "selector parse failures",
		expr: "authorizer.group('apps').resource('deployments').fieldSelector('foo badoperator bar').labelSelector('apple badoperator banana').check('create')",
		want: attrs{
			User: alice, Verb: "create", ResourceRequest: true, APIGroup: "apps", APIVersion: "*",
			Resource: "deployments", FieldSelectorErr: true, LabelSelectorErr: true,
		},
	}, {
		name: "empty selectors are absent",
		expr: "authorizer.group('apps').resource('deployments').fieldSelector('foo=bar').fieldSelector('').labelSelector('').check('list')",
		want: attrs{User: alice, Verb: "list", ResourceRequest: true, APIGroup: "apps", APIVersion: "*", Resource: "deployments"},
	}, {
		name: "request resource",
		expr: "authorizer.requestResource.check('custom-verb')",
		want: attrs{
			User: alice, Verb: "custom-verb", ResourceRequest: true, APIGroup: "apps", APIVersion: "*",
			Resource: "deployments", Subresource: "scale", NS: "team-a", Nm: "web",
		},
	}, {
		name: "service account",
		expr: "authorizer.serviceAccount('default', 'test-sa').group('').resource('endpoints').namespace('default').name('endpoints1').check('custom-verb')",
		want: attrs{
			User: sa, Verb: "custom-verb", ResourceRequest: true, APIVersion: "*",
			Resource: "endpoints", NS: "default", Nm: "endpoints1",
		},
	}}
	env := newAuthzEnv(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []attrs
			rec := authz.AuthorizerFunc(func(_ context.Context, a authz.Attributes) (authz.Result, error) {
				got = append(got, toAttrs(a))
				return authz.Result{Decision: authz.Allow}, nil
			})
			if res := evalAuthz(t, env, tc.expr, rec, alice); res.err != nil {
				t.Fatalf("Eval(%q) = %v", tc.expr, res.err)
			}
			if diff := cmp.Diff([]attrs{tc.want}, got); diff != "" {
				t.Errorf("Authorize() attributes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAuthzContext(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(t.Context(), key{}, "marker")
	var seen any
	a := authz.AuthorizerFunc(func(ctx context.Context, _ authz.Attributes) (authz.Result, error) {
		seen = ctx.Value(key{})
		return authz.Result{Decision: authz.Allow}, nil
	})
	env := newAuthzEnv(t)
	ast, iss := env.Compile("authorizer.path('/x').check('get').allowed()")
	if iss.Err() != nil {
		t.Fatal(iss.Err())
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatal(err)
	}
	authorizer, _ := celenv.AuthorizerValues(ctx, a, alice, authz.RequestResource{})
	out, _, err := prg.Eval(map[string]any{"authorizer": authorizer})
	if err != nil || out != types.True {
		t.Fatalf("Eval() = %v, %v; want true", out, err)
	}
	if seen != "marker" {
		t.Errorf("Authorize() saw context value %v, want %q", seen, "marker")
	}
}

func TestAuthzNilAuthorizer(t *testing.T) {
	tests := []string{
		"authorizer.path('/x').check('get').errored()",
		"authorizer.path('/x').check('get').error() == 'no authorizer configured'",
		"!authorizer.group('').resource('pods').check('get').allowed()",
		"authorizer.requestResource.check('get').error() == 'no authorizer configured'",
	}
	env := newAuthzEnv(t)
	for _, expr := range tests {
		t.Run(expr, func(t *testing.T) {
			got := evalAuthz(t, env, expr, nil, alice)
			if got.err != nil || got.val != types.True {
				t.Errorf("Eval(%q) = %v, %v; want true, nil", expr, got.val, got.err)
			}
		})
	}
}

func TestAuthzTypes(t *testing.T) {
	tests := []struct {
		expr string
		want string
	}{
		{"authorizer", "kubernetes.authorization.Authorizer"},
		{"authorizer.serviceAccount('a', 'b')", "kubernetes.authorization.Authorizer"},
		{"authorizer.path('/x')", "kubernetes.authorization.PathCheck"},
		{"authorizer.group('')", "kubernetes.authorization.GroupCheck"},
		{"authorizer.group('').resource('pods')", "kubernetes.authorization.ResourceCheck"},
		{"authorizer.requestResource", "kubernetes.authorization.ResourceCheck"},
		{"authorizer.path('/x').check('get')", "kubernetes.authorization.Decision"},
	}
	env := newAuthzEnv(t)
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			ast, iss := env.Compile(tc.expr)
			if iss.Err() != nil {
				t.Fatal(iss.Err())
			}
			if got := ast.OutputType().TypeName(); got != tc.want {
				t.Errorf("OutputType(%q) = %v, want %v", tc.expr, got, tc.want)
			}
			res := evalAuthz(t, env, tc.expr, testRules, alice)
			if res.err != nil {
				t.Fatalf("Eval(%q) = %v", tc.expr, res.err)
			}
			if got := res.val.Type().TypeName(); got != tc.want {
				t.Errorf("Eval(%q).Type() = %v, want %v", tc.expr, got, tc.want)
			}
			if got := res.val.ConvertToType(types.TypeType); got.(ref.Type).TypeName() != tc.want {
				t.Errorf("ConvertToType(type) = %v, want %v", got, tc.want)
			}
			if got := res.val.ConvertToType(res.val.Type()); got.Type() != res.val.Type() {
				t.Errorf("ConvertToType(own type) = %v, want the value itself", got)
			}
			if got := res.val.ConvertToType(types.StringType); !types.IsError(got) {
				t.Errorf("ConvertToType(string) = %v, want an error", got)
			}
			if _, err := res.val.ConvertToNative(nil); err == nil {
				t.Errorf("ConvertToNative() = nil error, want an error")
			}
		})
	}
}

func TestAuthzCompileErrors(t *testing.T) {
	env := newAuthzEnv(t)
	tests := []string{
		"authorizer.resource('pods')",
		"authorizer.group('').check('get')",
		"authorizer.path('/x').namespace('a')",
		"authorizer.path('/x').fieldSelector('a=b')",
		"authorizer.check('get')",
		"authorizer.path(1)",
	}
	for _, expr := range tests {
		t.Run(expr, func(t *testing.T) {
			if _, iss := env.Compile(expr); iss.Err() == nil {
				t.Errorf("Compile(%q) = nil error, want an error", expr)
			}
		})
	}
	// Without the selectors library the selector functions do not exist.
	base, err := cel.NewEnv(celenv.AuthzLibraries(false)...)
	if err != nil {
		t.Fatal(err)
	}
	if _, iss := base.Compile("authorizer.group('').resource('pods').labelSelector('a=b')"); iss.Err() == nil {
		t.Errorf("Compile(labelSelector) without AuthzSelectors = nil error, want an error")
	}
}

// TestAuthzCost ports the authz cases of upstream's cost_test.go
// (TestAuthzLibrary), with estimated and actual cost.
func TestAuthzCost(t *testing.T) {
	tests := []struct {
		name    string
		expr    string
		est     checker.CostEstimate
		runtime uint64
	}{
		{"path", "authorizer.path('/healthz')", checker.CostEstimate{Min: 2, Max: 2}, 2},
		{"resource", "authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend')", checker.CostEstimate{Min: 6, Max: 6}, 6},
		// authorizer(1) + group(1) + resource(1) + fieldSelector(10 + ceil(71*.1)=8 + ceil(ceil(71*.5)*50)=1800)
		{"fieldSelector", "authorizer.group('').resource('pods').fieldSelector('spec.nodeName=example-node-name.fully.qualified.domain.name.example.com')", checker.CostEstimate{Min: 1821, Max: 1821}, 1821},
		{"labelSelector", "authorizer.group('').resource('pods').labelSelector('spec.nodeName=example-node-name.fully.qualified.domain.name.example.com')", checker.CostEstimate{Min: 1821, Max: 1821}, 1821},
		{"path check allowed", "authorizer.path('/healthz').check('get').allowed()", checker.CostEstimate{Min: 350003, Max: 350003}, 350003},
		{"resource check allowed", "authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').allowed()", checker.CostEstimate{Min: 350007, Max: 350007}, 350007},
		{"resource check reason", "authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').reason()", checker.CostEstimate{Min: 350007, Max: 350007}, 350007},
		{"resource check errored", "authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').errored()", checker.CostEstimate{Min: 350007, Max: 350007}, 350007},
		{"resource check error", "authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').error()", checker.CostEstimate{Min: 350007, Max: 350007}, 350007},
		{"service account", "authorizer.serviceAccount('default', 'sa').path('/x')", checker.CostEstimate{Min: 3, Max: 3}, 3},
		{"request resource", "authorizer.requestResource.check('get').allowed()", checker.CostEstimate{Min: 350002, Max: 350002}, 350002},
		{"equality", "authorizer == authorizer", checker.CostEstimate{Min: 3, Max: 3}, 3},
	}
	env := newAuthzEnv(t)
	allow := authz.AuthorizerFunc(func(context.Context, authz.Attributes) (authz.Result, error) {
		return authz.Result{Decision: authz.Allow}, nil
	})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ast, iss := env.Compile(tc.expr)
			if iss.Err() != nil {
				t.Fatal(iss.Err())
			}
			est, err := env.EstimateCost(ast, &library.CostEstimator{})
			if err != nil {
				t.Fatalf("EstimateCost() = %v", err)
			}
			if est != tc.est {
				t.Errorf("EstimateCost(%q) = %+v, want %+v", tc.expr, est, tc.est)
			}
			if got := evalAuthz(t, env, tc.expr, allow, alice); got.cost != tc.runtime {
				t.Errorf("actual cost of %q = %d, want %d", tc.expr, got.cost, tc.runtime)
			}
		})
	}
}

func TestAuthzCostLimit(t *testing.T) {
	// Three checks cost more than the per-call limit of 1,000,000.
	env := newAuthzEnv(t)
	expr := "authorizer.path('/a').check('get').allowed() || authorizer.path('/b').check('get').allowed() || authorizer.path('/c').check('get').allowed()"
	got := evalAuthz(t, env, expr, casefile.RuleAuthorizer{}, alice)
	const want = "operation cancelled: actual cost limit exceeded"
	if got.err == nil || got.err.Error() != want {
		t.Errorf("Eval(%q) error = %v, want %q", expr, got.err, want)
	}
}

func TestCachingAuthorizerConcurrent(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	backend := authz.AuthorizerFunc(func(_ context.Context, a authz.Attributes) (authz.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		calls[a.Verb]++
		return authz.Result{Decision: authz.Allow, Reason: a.Verb}, nil
	})
	c := authz.NewCaching(backend)
	env := newAuthzEnv(t)
	var wg sync.WaitGroup
	for i := range 16 {
		verb := fmt.Sprintf("v%d", i%4)
		wg.Go(func() {
			expr := fmt.Sprintf("authorizer.path('/x').check('%s').reason() == '%s'", verb, verb)
			if got := evalAuthz(t, env, expr, c, alice); got.err != nil || got.val != types.True {
				t.Errorf("Eval(%q) = %v, %v; want true", expr, got.val, got.err)
			}
		})
	}
	wg.Wait()
	for verb, n := range calls {
		if n < 1 || n > 4 {
			t.Errorf("backend calls for %s = %d, want 1..4", verb, n)
		}
	}
	if len(calls) != 4 {
		t.Errorf("distinct checks = %d, want 4", len(calls))
	}
}

// ExampleAuthorizerValues binds the authorizer variable for one request,
// with decisions from a RuleAuthorizer.
func ExampleAuthorizerValues() {
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	scope := env.NewScope(celenv.ScopeOptions{})
	p := scope.Compile("authorizer.group('apps').resource('deployments').namespace('prod').check('delete').reason()",
		celenv.Decls{Authorizer: true}, cel.StringType)
	rules := casefile.RuleAuthorizer{
		{Groups: []string{"admins"}, Verb: "delete", Decision: authz.Allow, Reason: "admins may delete"},
		{Namespace: "prod", Decision: authz.Deny, Reason: "prod is protected"},
	}
	ctx := context.Background()
	for _, user := range []authenticationv1.UserInfo{
		{Username: "ann", Groups: []string{"admins"}},
		{Username: "bob", Groups: []string{"devs"}},
	} {
		authorizer, requestResource := celenv.AuthorizerValues(ctx, authz.NewCaching(rules), user, authz.RequestResource{
			Group: "apps", Resource: "deployments", Namespace: "prod", Name: "web",
		})
		in := &celenv.Input{Authorizer: authorizer, RequestResource: requestResource}
		res, err := scope.NewBatch(ctx, nil, in, runtimeBudget).Eval(p)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %v\n", user.Username, res.Value)
	}
	// Output:
	// ann: admins may delete
	// bob: prod is protected
}

func TestReadsAuthorizer(t *testing.T) {
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := env.NewScope(celenv.ScopeOptions{})
	s.AddVariable("plain", "object.metadata.name")
	s.AddVariable("allowed", "authorizer.group('apps').resource('deployments').check('create').allowed()")
	s.AddVariable("nested", "variables.allowed")
	for _, tc := range []struct {
		expr string
		want bool
	}{
		{"object.metadata.name == 'x'", false},
		{"authorizer.group('').resource('pods').check('get').allowed()", true},
		{"authorizer.requestResource.check('get').allowed()", true},
		{"variables.plain == 'x'", false},
		{"variables.allowed", true},
		{"variables.nested && variables.plain == 'x'", true},
		{"has(variables.plain)", false},
		{"has(object.authorizer)", false},
	} {
		p := s.Compile(tc.expr, celenv.Decls{Authorizer: true}, cel.BoolType)
		if p.Err() != nil {
			t.Fatalf("%s: %v", tc.expr, p.Err())
		}
		if got := p.ReadsAuthorizer(); got != tc.want {
			t.Errorf("ReadsAuthorizer(%s) = %v, want %v", tc.expr, got, tc.want)
		}
	}
}

// TestRuleAuthorizerConformance replays the authorizer expressions of the
// conformance cases authorizer-checks and authorizer-groups-path-errors
// with their rules and users, expecting the outcome the expected responses
// imply.
func TestRuleAuthorizerConformance(t *testing.T) {
	checksRules := authorizerRules(t, `
apiVersion: vapkit.dev/v1alpha1
kind: AuthorizerRules
rules:
- {user: bob, verb: approve, apiGroup: example.com, resource: deployments, subresource: approval, namespace: team-a, decision: Deny, reason: "bob is not an approver"}
- {user: bob, verb: escalate, resource: deployments, decision: Allow}
- {user: "system:serviceaccount:kube-system:deployer", verb: update, apiGroup: apps, resource: deployments, namespace: team-b, decision: Allow}
- {user: bob, verb: delete, namespace: team-a, decision: Allow, reason: "bob may delete in team-a"}
`)
	miscRules := authorizerRules(t, `
apiVersion: vapkit.dev/v1alpha1
kind: AuthorizerRules
rules:
- {groups: [monitoring], path: "/metrics", verb: get, decision: Allow}
- {resource: secrets, verb: list, decision: NoOpinion, error: "webhook authorizer unavailable"}
- {groups: [admins], resource: secrets, decision: Allow}
- {resource: secrets, decision: Deny, reason: "secrets are off limits"}
`)
	bob := authenticationv1.UserInfo{Username: "bob", Groups: []string{"developers", "system:authenticated"}}
	dave := authenticationv1.UserInfo{Username: "dave", Groups: []string{"monitoring", "system:authenticated"}}
	tests := []struct {
		rules casefile.RuleAuthorizer
		user  authenticationv1.UserInfo
		expr  string
		want  bool
	}{
		// authorizer-checks (request: apps deployments team-a/web, here with subresource scale)
		{checksRules, bob, "authorizer.group('example.com').resource('deployments').subresource('approval').namespace('team-a').name('web').check('approve').allowed()", false},
		{checksRules, bob, "authorizer.group('example.com').resource('deployments').subresource('approval').namespace('team-a').name('web').check('approve').reason() == 'bob is not an approver'", true},
		{checksRules, bob, "authorizer.requestResource.check('escalate').allowed()", true},
		{checksRules, bob, "authorizer.serviceAccount('kube-system', 'deployer').group('apps').resource('deployments').namespace('team-a').check('update').allowed()", false},
		{checksRules, bob, "authorizer.serviceAccount('kube-system', 'deployer').group('apps').resource('deployments').namespace('team-b').check('update').allowed()", true},
		{checksRules, bob, "authorizer.requestResource.check('delete').reason() == 'bob may delete in team-a'", true},
		// authorizer-groups-path-errors
		{miscRules, dave, "authorizer.path('/metrics').check('get').allowed()", true},
		{miscRules, bob, "authorizer.path('/metrics').check('get').allowed()", false},
		{miscRules, dave, "!authorizer.group('').resource('secrets').namespace('default').check('list').errored()", false},
		{miscRules, dave, "authorizer.group('').resource('secrets').namespace('default').check('list').error() == 'webhook authorizer unavailable'", true},
		{miscRules, dave, "authorizer.group('').resource('secrets').namespace('default').check('get').allowed()", false},
		{miscRules, dave, "authorizer.group('').resource('secrets').namespace('default').check('get').reason() == 'secrets are off limits'", true},
	}
	env := newAuthzEnv(t)
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			t.Parallel()
			got := evalAuthz(t, env, tc.expr, authz.NewCaching(tc.rules), tc.user)
			if got.err != nil || got.val != types.Bool(tc.want) {
				t.Errorf("Eval(%q) = %v, %v; want %v", tc.expr, got.val, got.err, tc.want)
			}
		})
	}
}

// authorizerRules reads the rules of a vapkit.dev/v1alpha1 AuthorizerRules
// document.
func authorizerRules(t *testing.T, doc string) casefile.RuleAuthorizer {
	t.Helper()
	var d struct {
		APIVersion string                  `json:"apiVersion"`
		Kind       string                  `json:"kind"`
		Rules      casefile.RuleAuthorizer `json:"rules"`
	}
	if err := yaml.UnmarshalStrict([]byte(doc), &d); err != nil {
		t.Fatalf("yaml.UnmarshalStrict() = %v", err)
	}
	return d.Rules
}
