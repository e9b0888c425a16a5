package library

import (
	"math"
	"strings"

	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// CostEstimator supplies the call costs the Kubernetes API server charges for
// its CEL libraries, as apiserver pkg/cel/library/cost.go CostEstimator.
//
// As an [interpreter.ActualCostEstimator] (program option
// cel.CostTracking) it decides the actual cost of an evaluation, which is
// what VAP budgets are charged. As a [checker.CostEstimator]
// (cel.Env.EstimateCost) it gives the static estimate upstream uses for
// CRD rules; VAP never limits estimates, so that side only serves analysis.
//
// Costs are chosen by function name, whatever the overload, so they also
// apply to cel-go functions of the same name (for example the string
// extension's lowerAscii, replace, split and join). Calls it has no figure
// for get cel-go's default cost.
//
// The zero value is ready to use. A CostEstimator is safe for concurrent use
// if its SizeEstimator is.
type CostEstimator struct {
	// SizeEstimator, if not nil, estimates the size of values whose size
	// the expression itself does not tell (for example from an OpenAPI
	// maxLength). It is only used for estimates.
	SizeEstimator checker.CostEstimator
}

var (
	_ interpreter.ActualCostEstimator = (*CostEstimator)(nil)
	_ checker.CostEstimator           = (*CostEstimator)(nil)
)

// Cost model constants, as apiserver's.
const (
	// checkCost is the fixed cost of an authorization check; it lets two
	// checks, but not three, fit in the per-expression limit of 1,000,000.
	checkCost = 350000

	// selectorLengthToRequirementCount is the number of requirements a
	// selector of length n may hold per character: "k," is the shortest
	// repeatable requirement.
	selectorLengthToRequirementCount = 0.5
	// costPerRequirement is the cost of building one requirement: a struct
	// and a values list.
	costPerRequirement = float64(common.ListCreateBaseCost + common.StructCreateBaseCost)

	// maxFormatSize is the longest format name (apiserver cel.MaxFormatSize).
	maxFormatSize = 64
	// maxNameFormatRegexSize bounds the regex of any named format in
	// estimates (apiserver cel.MaxNameFormatRegexSize).
	maxNameFormatRegexSize = 128

	// authzTypePrefix starts the names of the authorizer library types,
	// which live in package celenv (that imports this package).
	authzTypePrefix = "kubernetes.authorization."
)

// selectorCost estimates the cost of parsing a field or label selector of
// the given length: a list, a traversal of the string and the requirements.
func selectorCost(length checker.SizeEstimate) checker.CostEstimate {
	base := checker.CostEstimate{Min: common.ListCreateBaseCost, Max: common.ListCreateBaseCost}
	parse := length.MultiplyByCostFactor(common.StringTraversalCostFactor)
	requirements := length.MultiplyByCostFactor(selectorLengthToRequirementCount).MultiplyByCostFactor(costPerRequirement)
	return base.Add(parse).Add(requirements)
}

// stringCost is ceil(n * factor), the cost of traversing n units.
func stringCost(n uint64, factor float64) uint64 {
	return uint64(math.Ceil(float64(n) * factor))
}

// regexCost is the cost of matching a string of strLen against a regular
// expression of reLen, as cel-go's matches: ceil((1+strLen)*0.1) *
// ceil(reLen*0.25).
func regexCost(strLen, reLen uint64) uint64 {
	return uint64(math.Ceil((1.0+float64(strLen))*common.StringTraversalCostFactor)) *
		stringCost(reLen, common.RegexStringLengthCostFactor)
}

func ptr(c uint64) *uint64 { return &c }

// fixedCost is the cost of the calls that cost the same whatever their
// arguments, charged and estimated alike: the authorizer's check and
// accessors, and the accessors of the Kubernetes value types.
func fixedCost(function string) (uint64, bool) {
	switch function {
	case "check":
		return checkCost, true
	case "serviceAccount", "path", "group", "resource", "subresource", "namespace", "name",
		"allowed", "reason", "error", "errored":
		return 1, true
	case "masked", "prefixLength", "family", "isUnspecified", "isLoopback",
		"isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast":
		return 1, true
	case "format.named":
		return 1, true
	case "sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan",
		"compareTo", "add", "sub", "major", "minor", "patch":
		return 1, true
	case "getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery":
		return 1, true
	}
	return 0, false
}

// CallCost implements [interpreter.ActualCostEstimator]: it returns the
// actual cost of one call given its arguments and result, or nil to let
// cel-go apply its default.
func (e *CostEstimator) CallCost(function, overloadID string, args []ref.Val, result ref.Val) *uint64 {
	if c, ok := fixedCost(function); ok {
		return ptr(c)
	}
	switch function {
	case "fieldSelector", "labelSelector":
		if len(args) >= 2 {
			n := actualSize(args[1])
			return ptr(selectorCost(checker.SizeEstimate{Min: n, Max: n}).Max)
		}
	case "isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes":
		// One traversal of the receiver.
		var cost uint64
		if len(args) > 0 {
			cost = traversalCost(args[0])
		}
		return &cost
	case "url", "lowerAscii", "upperAscii", "substring", "trim", "jsonpatch.escapeKey",
		"cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver":
		// One traversal of the string argument.
		if len(args) >= 1 {
			return ptr(stringCost(actualSize(args[0]), common.StringTraversalCostFactor))
		}
	case "replace", "split", "ip.isCanonical":
		// A traversal plus building the result, or parsing then comparing
		// with the input.
		if len(args) >= 1 {
			return ptr(stringCost(actualSize(args[0]), 2*common.StringTraversalCostFactor))
		}
	case "join":
		if len(args) >= 1 {
			return ptr(stringCost(actualSize(result), 2*common.StringTraversalCostFactor))
		}
	case "find", "findAll":
		if len(args) >= 2 {
			return ptr(regexCost(actualSize(args[0]), actualSize(args[1])))
		}
	case "ip":
		if len(args) >= 1 {
			if overloadID == "cidr_ip" {
				// Reading the address of a CIDR.
				return ptr(1)
			}
			return ptr(stringCost(actualSize(args[0]), common.StringTraversalCostFactor))
		}
	case "containsIP", "containsCIDR":
		if len(args) >= 2 {
			return ptr(containsCost(function, overloadID, args))
		}
	case "validate":
		if len(args) >= 2 {
			if f, ok := args[0].Value().(FormatValue); ok {
				// The format's regex is not at hand; its size bound is.
				return ptr(regexCost(actualSize(args[1]), uint64(max(f.MaxRegexSize, 0))))
			}
		}
	case "_==_":
		if len(args) == 2 && isUnitEqualityValue(args[0]) {
			return ptr(1)
		}
	}
	return nil
}

// containsCost is the actual cost of cidr.containsIP and cidr.containsCIDR
// with two arguments: comparing up to the prefix length in bytes on both
// sides, plus masking the base CIDR and comparing prefix lengths for
// containsCIDR, plus parsing for the string overloads.
func containsCost(function, overloadID string, args []ref.Val) uint64 {
	cidrSize := actualSize(args[0])
	cost := stringCost(2*cidrSize, common.StringTraversalCostFactor)
	if function == "containsIP" {
		if overloadID == "cidr_contains_ip_string" {
			cost += stringCost(actualSize(args[1]), common.StringTraversalCostFactor)
		}
		return cost
	}
	cost += stringCost(cidrSize, common.StringTraversalCostFactor) + 1
	if overloadID == "cidr_contains_cidr_string" {
		cost += stringCost(actualSize(args[1]), common.StringTraversalCostFactor)
	}
	return cost
}

// isUnitEqualityValue reports whether == with v on the left costs 1, as
// upstream's list of Kubernetes value types: URLs included, although their
// comparison is not constant-time.
func isUnitEqualityValue(v ref.Val) bool {
	switch v.(type) {
	case QuantityValue, *QuantityValue, IPValue, *IPValue, CIDRValue, *CIDRValue,
		FormatValue, *FormatValue, URLValue, *URLValue, SemverValue, *SemverValue:
		return true
	}
	// The authz values are defined in package celenv; recognise them by name.
	t := v.Type()
	return t != nil && strings.HasPrefix(t.TypeName(), authzTypePrefix)
}

// actualSize is the Size of a sized value and 1 otherwise, as upstream's
// (which, unlike cel-go's, does not look inside optionals).
func actualSize(v ref.Val) uint64 {
	if s, ok := v.(traits.Sizer); ok {
		if n, ok := s.Size().(types.Int); ok && n >= 0 {
			return uint64(n)
		}
	}
	return 1
}

// traversalCost is the cost of walking v as a data tree: a tenth of the
// byte length of strings and bytes (rounded down), the sum over list
// elements and over map keys and values, and 1 for anything else.
func traversalCost(v ref.Val) uint64 {
	switch vt := v.(type) {
	case types.String:
		return uint64(float64(len(vt)) * common.StringTraversalCostFactor)
	case types.Bytes:
		return uint64(float64(len(vt)) * common.StringTraversalCostFactor)
	case traits.Lister:
		var cost uint64
		for it := vt.Iterator(); it.HasNext() == types.True; {
			cost += traversalCost(it.Next())
		}
		return cost
	case traits.Mapper:
		var cost uint64
		for it := vt.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			cost += traversalCost(k) + traversalCost(vt.Get(k))
		}
		return cost
	default:
		return 1
	}
}
