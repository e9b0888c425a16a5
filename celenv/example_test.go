package celenv_test

import (
	"context"
	"fmt"

	"github.com/google/cel-go/cel"

	"github.com/vapkit/vapkit/celenv"
)

var modeName = map[celenv.Mode]string{celenv.StoredExpressions: "StoredExpressions", celenv.NewExpressions: "NewExpressions"}

// ExampleNew asks whether API servers of two versions accept a policy that
// uses the semver library, introduced in Kubernetes 1.33: a 1.33 server
// evaluates such stored policies but rejects new ones, as new expressions
// must also work on a server one minor version older.
func ExampleNew() {
	const expr = "semver(object.spec.version).isGreaterThan(semver('1.0.0'))"
	for _, v := range []celenv.Version{celenv.Version1_33, celenv.Version1_34} {
		env, err := celenv.New(celenv.Options{Version: v})
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, mode := range []celenv.Mode{celenv.NewExpressions, celenv.StoredExpressions} {
			p := env.NewScope(celenv.ScopeOptions{}).WithMode(mode).Compile(expr, celenv.Decls{}, cel.BoolType)
			fmt.Printf("%s %s: accepted=%v\n", v, modeName[mode], p.Err() == nil)
		}
	}

	env, err := celenv.New(celenv.Options{Version: celenv.Version1_33})
	if err != nil {
		fmt.Println(err)
		return
	}
	scope := env.NewScope(celenv.ScopeOptions{})
	p := scope.Compile(expr, celenv.Decls{}, cel.BoolType)
	in := &celenv.Input{Object: map[string]any{"spec": map[string]any{"version": "1.2.3"}}}
	res, err := scope.NewBatch(context.Background(), nil, in, 10_000_000).Eval(p) // the API server's budget per policy evaluation
	fmt.Println(res.Value, res.Err, res.Cost, err)
	// Output:
	// 1.33 NewExpressions: accepted=false
	// 1.33 StoredExpressions: accepted=true
	// 1.34 NewExpressions: accepted=true
	// 1.34 StoredExpressions: accepted=true
	// true <nil> 6 <nil>
}

// ExampleSession evaluates an expression in a batch of a Session, which
// charges the expression's estimated bound for the inputs' sizes when that
// keeps every limit out of reach, and in a batch without one, which
// measures the cost as the API server does: the value is the same.
func ExampleSession() {
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	scope := env.NewScope(celenv.ScopeOptions{})
	p := scope.Compile("object.spec.containers.all(c, c.image.startsWith('registry.example.com/'))", celenv.Decls{}, cel.BoolType)
	pod := map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"image": "registry.example.com/web:1.0"},
		map[string]any{"image": "registry.example.com/sidecar:2.1"},
	}}}
	in := &celenv.Input{Object: pod}

	var session celenv.Session
	res, err := scope.NewBatch(context.Background(), &session, in, 10_000_000).Eval(p)
	fmt.Println("estimated:", res.Value, res.Cost, res.Estimated, err)
	session.Reset() // the request is over

	res, err = scope.NewBatch(context.Background(), nil, in, 10_000_000).Eval(p) // the API server's budget per policy evaluation
	fmt.Println("measured:", res.Value, res.Cost, res.Estimated, err)
	// Output:
	// estimated: true 516 true <nil>
	// measured: true 20 false <nil>
}
