package celenv_test

import (
	"context"
	"fmt"

	"github.com/google/cel-go/cel"

	"github.com/vapkit/vapkit/celenv"
)

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
			fmt.Printf("%s %s: accepted=%v\n", v, mode, p.Err() == nil)
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
	res, err := scope.NewBatch(context.Background(), in, celenv.RuntimeBudget).Eval(p)
	fmt.Println(res.Value, res.Err, res.Cost, err)
	// Output:
	// 1.33 NewExpressions: accepted=false
	// 1.33 StoredExpressions: accepted=true
	// 1.34 NewExpressions: accepted=true
	// 1.34 StoredExpressions: accepted=true
	// true <nil> 6 <nil>
}

// ExampleBatch_Untracked evaluates an expression untracked, which charges
// its estimated bound for the inputs' size, and then tracked, which charges
// the measured cost: the value is the same.
func ExampleBatch_Untracked() {
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
	fmt.Println("size bound:", celenv.SizeBound(pod))

	fast := scope.NewBatch(context.Background(), in, celenv.RuntimeBudget).Untracked(nil)
	res, err := fast.Eval(p)
	fmt.Println("untracked:", res.Value, res.Cost, res.Estimated, err)

	tracked := scope.NewBatch(context.Background(), in, celenv.RuntimeBudget)
	res, err = tracked.Eval(p)
	fmt.Println("tracked:", res.Value, res.Cost, res.Estimated, err)
	// Output:
	// size bound: 32
	// untracked: true 516 true <nil>
	// tracked: true 20 false <nil>
}
