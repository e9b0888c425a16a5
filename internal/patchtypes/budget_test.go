package patchtypes_test

// The API server's cost budgets for one (policy, binding, param)
// evaluation (k8s.io/apiserver pkg/apis/cel/config.go): validations and
// their messages, and again audit annotations, may spend runtimeBudget;
// match conditions matchConditionsBudget.
const (
	runtimeBudget         = 10_000_000
	matchConditionsBudget = 2_500_000
)
