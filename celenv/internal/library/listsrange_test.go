package library_test

import (
	"reflect"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"

	"github.com/vapkit/vapkit/celenv/internal/library"
)

// TestUnlimitedRange evaluates lists.range as cel-go v0.26.0 does, with
// and without the API server's per-expression cost limit, and checks the
// cost charged, which cel-go reports even for a cancelled evaluation.
func TestUnlimitedRange(t *testing.T) {
	t.Parallel()
	const cancelled = "operation cancelled: actual cost limit exceeded"
	tests := []struct {
		name    string
		expr    string
		limit   bool // evaluate with the per-expression cost limit of 1,000,000
		want    any
		wantErr string
		cost    uint64 // checked when not 0
	}{
		{name: "small", expr: "lists.range(3)", limit: true, want: []int64{0, 1, 2}, cost: 14},
		{name: "zero", expr: "lists.range(0) == []", limit: true, want: true},
		{name: "negative is empty", expr: "lists.range(-5)", limit: true, want: []int64{}, cost: 11},
		{name: "negative size", expr: "lists.range(-1).size() == 0", limit: true, want: true},
		{name: "at the v0.29 maximum, over the cost limit", expr: "lists.range(1000000).size() > 0", limit: true,
			wantErr: cancelled, cost: 1_000_011},
		{name: "over the v0.29 maximum", expr: "lists.range(1100000).size() > 0", limit: true,
			wantErr: cancelled, cost: 1_100_011},
		{name: "not absorbed by ||", expr: "true || lists.range(1100000).size() > 0 ", limit: true, want: true},
		{name: "cancels the whole evaluation", expr: "lists.range(1100000).size() > 0 || true", limit: true,
			wantErr: cancelled, cost: 1_100_011},
		{name: "huge", expr: "lists.range(9223372036854775807).size() > 0", limit: true,
			wantErr: cancelled},
		{name: "under the cost limit", expr: "lists.range(999987).size() == 999987", limit: true, want: true, cost: 1_000_000},
		{name: "one over the cost limit", expr: "lists.range(999988).size() == 999988", limit: true, wantErr: cancelled},
		{name: "no limit: size", expr: "lists.range(1000001).size()", want: int64(1_000_001)},
		{name: "no limit: elements", expr: "lists.range(1000001)[1000000] == 1000000 && " +
			"1000000 in lists.range(1000001) && lists.range(1000001) == lists.range(1000001) && " +
			"(lists.range(1000001) + [7])[1000001] == 7 && lists.range(1000001).all(x, x >= 0)", want: true},
	}
	env := newEnv(t, ext.Lists(ext.ListsVersion(3)), library.UnlimitedRange())
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ast, iss := env.Compile(tc.expr)
			if iss.Err() != nil {
				t.Fatalf("Compile(%q) = %v", tc.expr, iss.Err())
			}
			opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
			if tc.limit {
				opts = append(opts, cel.EvalOptions(cel.OptTrackCost), cel.CostLimit(1_000_000))
			}
			prg, err := env.Program(ast, opts...)
			if err != nil {
				t.Fatalf("Program(%q) = %v", tc.expr, err)
			}
			out, det, err := prg.Eval(cel.NoVars())
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Eval(%q) = %v, %v; want error %q", tc.expr, out, err, tc.wantErr)
				}
			} else {
				if err != nil {
					t.Fatalf("Eval(%q) = %v", tc.expr, err)
				}
				got, err := out.ConvertToNative(reflect.TypeOf(tc.want))
				if err != nil || !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("Eval(%q) = %v (%v); want %v", tc.expr, got, err, tc.want)
				}
			}
			if tc.cost != 0 {
				if c := det.ActualCost(); c == nil || *c != tc.cost {
					t.Errorf("Eval(%q) cost = %v; want %d", tc.expr, c, tc.cost)
				}
			}
		})
	}
}
