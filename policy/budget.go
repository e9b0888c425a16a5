package policy

// The API server's cost budgets for one (policy, binding, param) evaluation
// (k8s.io/apiserver pkg/apis/cel/config.go). celenv takes a budget per
// batch; which stage gets which budget is the pipeline's business.
const (
	// runtimeBudget is what the validations and their message expressions
	// may spend, and again what the audit annotations may spend; each
	// mutation gets a fresh one.
	runtimeBudget = 10_000_000
	// matchConditionsBudget is what the match conditions may spend.
	matchConditionsBudget = 2_500_000
)
