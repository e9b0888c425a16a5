package library

import (
	"math"
	"strings"

	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
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

// CallCost implements [interpreter.ActualCostEstimator]: it returns the
// actual cost of one call given its arguments and result, or nil to let
// cel-go apply its default.
func (e *CostEstimator) CallCost(function, overloadID string, args []ref.Val, result ref.Val) *uint64 {
	switch function {
	case "check":
		return ptr(checkCost)
	case "serviceAccount", "path", "group", "resource", "subresource", "namespace", "name",
		"allowed", "reason", "error", "errored":
		return ptr(1)
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
	case "url", "lowerAscii", "upperAscii", "substring", "trim", "jsonpatch.escapeKey":
		if len(args) >= 1 {
			return ptr(stringCost(actualSize(args[0]), common.StringTraversalCostFactor))
		}
	case "replace", "split":
		// A traversal plus building the result.
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
	case "cidr", "isIP", "isCIDR":
		if len(args) >= 1 {
			return ptr(stringCost(actualSize(args[0]), common.StringTraversalCostFactor))
		}
	case "ip":
		if len(args) >= 1 {
			if overloadID == "cidr_ip" {
				// Reading the address of a CIDR.
				return ptr(1)
			}
			return ptr(stringCost(actualSize(args[0]), common.StringTraversalCostFactor))
		}
	case "ip.isCanonical":
		// Parse, then compare with the input.
		if len(args) >= 1 {
			return ptr(stringCost(actualSize(args[0]), 2*common.StringTraversalCostFactor))
		}
	case "masked", "prefixLength", "family", "isUnspecified", "isLoopback",
		"isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast":
		return ptr(1)
	case "containsIP":
		if len(args) >= 2 {
			cidrSize := actualSize(args[0])
			// Compare up to the prefix length in bytes on both sides.
			cost := stringCost(2*cidrSize, common.StringTraversalCostFactor)
			if overloadID == "cidr_contains_ip_string" {
				cost += stringCost(actualSize(args[1]), common.StringTraversalCostFactor)
			}
			return &cost
		}
	case "containsCIDR":
		if len(args) >= 2 {
			cidrSize := actualSize(args[0])
			cost := stringCost(2*cidrSize, common.StringTraversalCostFactor)
			// Masking the base CIDR and comparing prefix lengths.
			cost += stringCost(cidrSize, common.StringTraversalCostFactor) + 1
			if overloadID == "cidr_contains_cidr_string" {
				cost += stringCost(actualSize(args[1]), common.StringTraversalCostFactor)
			}
			return &cost
		}
	case "quantity", "isQuantity", "semver", "isSemver":
		if len(args) >= 1 {
			return ptr(stringCost(actualSize(args[0]), common.StringTraversalCostFactor))
		}
	case "validate":
		if len(args) >= 2 {
			if f, ok := args[0].Value().(FormatValue); ok {
				// The format's regex is not at hand; its size bound is.
				return ptr(regexCost(actualSize(args[1]), uint64(max(f.MaxRegexSize, 0))))
			}
		}
	case "format.named":
		return ptr(1)
	case "sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan",
		"compareTo", "add", "sub", "major", "minor", "patch":
		return ptr(1)
	case "getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery":
		return ptr(1)
	case "_==_":
		if len(args) == 2 && isUnitEqualityValue(args[0]) {
			return ptr(1)
		}
	}
	return nil
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

// EstimateCallCost implements [checker.CostEstimator]: the estimated cost
// range (and result size where it helps) of a call, or nil for cel-go's
// default. The figures are apiserver's; changing them would change which
// CRD rules upstream accepts.
func (e *CostEstimator) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	fixed := func(c uint64) *checker.CallEstimate {
		return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: c, Max: c}}
	}
	traversal := func(n checker.AstNode, factor float64) *checker.CallEstimate {
		return &checker.CallEstimate{CostEstimate: e.sizeEstimate(n).MultiplyByCostFactor(factor)}
	}
	switch function {
	case "check":
		return fixed(checkCost)
	case "serviceAccount", "path", "group", "resource", "subresource", "namespace", "name",
		"allowed", "reason", "error", "errored":
		return fixed(1)
	case "fieldSelector", "labelSelector":
		if len(args) == 1 {
			return &checker.CallEstimate{CostEstimate: selectorCost(e.sizeEstimate(args[0]))}
		}
	case "isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes":
		if target != nil {
			return e.estimateTraversal(function, *target)
		}
	case "url", "jsonpatch.escapeKey":
		if len(args) == 1 {
			sz := e.sizeEstimate(args[0])
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(common.StringTraversalCostFactor), ResultSize: &sz}
		}
	case "lowerAscii", "upperAscii", "substring", "trim":
		if target != nil {
			sz := e.sizeEstimate(*target)
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(common.StringTraversalCostFactor), ResultSize: &sz}
		}
	case "replace":
		if target != nil && len(args) >= 2 {
			return e.estimateReplace(*target, args[0], args[1])
		}
	case "split":
		if target != nil {
			sz := e.sizeEstimate(*target)
			// At worst every character becomes an element, unless a literal
			// limit says otherwise.
			maxElems := sz.Max
			if len(args) > 1 {
				if lit := args[1].Expr().AsLiteral(); lit != nil {
					if n, ok := lit.Value().(int64); ok {
						maxElems = uint64(n)
					}
				}
			}
			return &checker.CallEstimate{
				CostEstimate: sz.MultiplyByCostFactor(2 * common.StringTraversalCostFactor),
				ResultSize:   &checker.SizeEstimate{Min: 0, Max: maxElems},
			}
		}
	case "join":
		if target != nil {
			return e.estimateJoin(*target, args)
		}
	case "find", "findAll":
		if target != nil && len(args) >= 1 {
			sz := e.sizeEstimate(*target)
			strCost := sz.Add(checker.SizeEstimate{Min: 1, Max: 1}).MultiplyByCostFactor(common.StringTraversalCostFactor)
			reCost := e.sizeEstimate(args[0]).MultiplyByCostFactor(common.RegexStringLengthCostFactor)
			return &checker.CallEstimate{
				CostEstimate: strCost.Multiply(reCost),
				ResultSize:   &checker.SizeEstimate{Min: 0, Max: sz.Max},
			}
		}
	case "cidr", "isIP", "isCIDR":
		if len(args) >= 1 {
			return traversal(args[0], common.StringTraversalCostFactor)
		}
	case "ip":
		if overloadID == "cidr_ip" {
			return fixed(1)
		}
		if len(args) >= 1 {
			return traversal(args[0], common.StringTraversalCostFactor)
		}
	case "ip.isCanonical":
		if len(args) >= 1 {
			return traversal(args[0], 2*common.StringTraversalCostFactor)
		}
	case "masked", "prefixLength", "family", "isUnspecified", "isLoopback",
		"isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast":
		return fixed(1)
	case "containsIP", "containsCIDR":
		if len(args) >= 1 {
			return e.estimateContains(function, overloadID, args[0])
		}
	case "quantity", "isQuantity", "semver", "isSemver":
		if len(args) >= 1 {
			return traversal(args[0], common.StringTraversalCostFactor)
		}
	case "validate":
		if len(args) >= 1 {
			sz := e.sizeEstimate(args[0])
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(common.StringTraversalCostFactor).
				MultiplyByCostFactor(maxNameFormatRegexSize * common.RegexStringLengthCostFactor)}
		}
	case "format.named":
		return fixed(1)
	case "sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan",
		"compareTo", "add", "sub", "major", "minor", "patch":
		return fixed(1)
	case "getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery":
		return fixed(1)
	case "_==_":
		if len(args) == 2 {
			return estimateEquality(args[0], args[1])
		}
	}
	return nil
}

// estimateTraversal estimates the list functions and indexOf/lastIndexOf on
// strings: one comparison per element, plus a traversal of string or bytes
// elements.
func (e *CostEstimator) estimateTraversal(function string, target checker.AstNode) *checker.CallEstimate {
	elCost := checker.CostEstimate{Min: 1, Max: 1}
	if el := listElementNode(target); el != nil {
		if k := el.Type().Kind(); k == types.StringKind || k == types.BytesKind {
			elCost = elCost.Add(e.sizeEstimate(el).MultiplyByCostFactor(common.StringTraversalCostFactor))
		}
		return &checker.CallEstimate{CostEstimate: e.sizeEstimate(target).MultiplyByCost(elCost)}
	}
	if function == "includes" {
		// A dyn receiver may be a list compared element by element.
		return &checker.CallEstimate{CostEstimate: e.sizeEstimate(target).MultiplyByCost(elCost)}
	}
	// A string receiver (indexOf, lastIndexOf).
	return &checker.CallEstimate{CostEstimate: e.sizeEstimate(target).MultiplyByCostFactor(common.StringTraversalCostFactor)}
}

// estimateReplace bounds the result of s.replace(old, new) and charges a
// traversal plus construction.
func (e *CostEstimator) estimateReplace(target, oldNode, newNode checker.AstNode) *checker.CallEstimate {
	sz := e.sizeEstimate(target)
	oldSz := e.sizeEstimate(oldNode)
	newSz := e.sizeEstimate(newNode)

	var count, kept checker.SizeEstimate
	// Largest result: the shortest old replaced by the longest new as often
	// as possible; an empty old is inserted around every character.
	switch {
	case oldSz.Min == 0:
		count.Max = satAdd1(sz.Max)
		kept.Max = sz.Max
	case newSz.Max <= oldSz.Min:
		count.Max = 0
		kept.Max = sz.Max
	default:
		count.Max = uint64(math.Ceil(float64(sz.Max) / float64(oldSz.Min)))
	}
	// Smallest result: the longest old replaced by the shortest new.
	switch {
	case oldSz.Max == 0:
		count.Min = satAdd1(sz.Min)
		kept.Min = sz.Min
	case oldSz.Max <= newSz.Min:
		count.Min = 0
		kept.Min = sz.Min
	default:
		count.Min = uint64(math.Ceil(float64(sz.Min) / float64(oldSz.Max)))
	}
	size := count.Multiply(newSz).Add(kept)
	return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(2 * common.StringTraversalCostFactor), ResultSize: &size}
}

// satAdd1 returns n+1, saturating at math.MaxUint64.
func satAdd1(n uint64) uint64 {
	if n < math.MaxUint64 {
		return n + 1
	}
	return n
}

// estimateJoin bounds the result of list.join(sep?) and charges one
// traversal of it.
func (e *CostEstimator) estimateJoin(target checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	var elSz checker.SizeEstimate
	if el := listElementNode(target); el != nil {
		elSz = e.sizeEstimate(el)
	}
	sz := e.joinSize(target, elSz, args)
	return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(common.StringTraversalCostFactor), ResultSize: &sz}
}

// joinSize bounds the length of list.join(sep?) for elements of size elSz.
func (e *CostEstimator) joinSize(target checker.AstNode, elSz checker.SizeEstimate, args []checker.AstNode) checker.SizeEstimate {
	listSz := e.sizeEstimate(target)
	sz := listSz.Multiply(elSz)
	if len(args) > 0 {
		var seps checker.SizeEstimate
		if listSz.Min > 0 {
			seps.Min = listSz.Min - 1
		}
		if listSz.Max > 0 {
			seps.Max = listSz.Max - 1
		}
		sz = sz.Add(e.sizeEstimate(args[0]).Multiply(seps))
	}
	return sz
}

// estimateContains estimates cidr.containsIP and cidr.containsCIDR: a
// comparison of two 4- or 16-byte addresses, plus masking for CIDRs, plus
// parsing for the string overloads.
func (e *CostEstimator) estimateContains(function, overloadID string, arg checker.AstNode) *checker.CallEstimate {
	addr := checker.SizeEstimate{Min: 4, Max: 16}
	cost := addr.Add(addr).MultiplyByCostFactor(common.StringTraversalCostFactor)
	parseOverload := "cidr_contains_ip_string"
	if function == "containsCIDR" {
		cost = cost.Add(addr.MultiplyByCostFactor(common.StringTraversalCostFactor))
		cost = cost.Add(checker.CostEstimate{Min: 1, Max: 1})
		parseOverload = "cidr_contains_cidr_string"
	}
	if overloadID == parseOverload {
		cost = cost.Add(checker.CostEstimate(e.sizeEstimate(arg)).MultiplyByCostFactor(common.StringTraversalCostFactor))
	}
	return &checker.CallEstimate{CostEstimate: cost}
}

// estimateEquality estimates == between two values of the same Kubernetes
// type. Types are recognised by name.
func estimateEquality(lhs, rhs checker.AstNode) *checker.CallEstimate {
	lt, rt := lhs.Type(), rhs.Type()
	if lt == nil || rt == nil || lt.Equal(rt) != types.True {
		return nil
	}
	unit := &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: 1}}
	name := lt.TypeName()
	switch lt.Kind() {
	case types.OpaqueKind:
		if name == IPType.TypeName() || name == CIDRType.TypeName() {
			return unit
		}
	case types.StructKind:
		switch {
		case name == QuantityType.TypeName(), name == SemverType.TypeName(), strings.HasPrefix(name, authzTypePrefix):
			return unit
		case name == FormatType.TypeName():
			return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: maxFormatSize}.
				MultiplyByCostFactor(common.StringTraversalCostFactor)}
		case name == URLType.TypeName():
			// Upstream sizes both sides from the right operand.
			size := checker.SizeEstimate{Min: 1, Max: 1}
			if rs := rhs.ComputedSize(); rs != nil {
				size = rs.Union(*rs)
			}
			return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: size.Max}.
				MultiplyByCostFactor(common.StringTraversalCostFactor)}
		}
	}
	return nil
}

// EstimateSize implements [checker.CostEstimator] by delegating to
// SizeEstimator, if any.
func (e *CostEstimator) EstimateSize(element checker.AstNode) *checker.SizeEstimate {
	if e.SizeEstimator != nil {
		return e.SizeEstimator.EstimateSize(element)
	}
	return nil
}

// sizeEstimate is the computed size of n, else the SizeEstimator's, else
// unbounded.
func (e *CostEstimator) sizeEstimate(n checker.AstNode) checker.SizeEstimate {
	if sz := n.ComputedSize(); sz != nil {
		return *sz
	}
	if sz := e.EstimateSize(n); sz != nil {
		return *sz
	}
	return checker.SizeEstimate{Min: 0, Max: math.MaxUint64}
}

// listElementNode returns a node standing for the elements of list, with
// the "@items" path so that a schema-based SizeEstimator can find a
// maxLength, or nil if list has no type parameters.
func listElementNode(list checker.AstNode) checker.AstNode {
	params := list.Type().Parameters()
	if len(params) == 0 {
		return nil
	}
	n := &itemsNode{t: params[0]}
	if p := list.Path(); p != nil {
		n.path = append(append(make([]string, 0, len(p)+1), p...), "@items")
	}
	return n
}

// itemsNode is a synthetic AST node for list elements.
type itemsNode struct {
	path []string
	t    *types.Type
}

var _ checker.AstNode = (*itemsNode)(nil)

func (n *itemsNode) Path() []string                      { return n.path }
func (n *itemsNode) Type() *types.Type                   { return n.t }
func (n *itemsNode) Expr() ast.Expr                      { return nil }
func (n *itemsNode) ComputedSize() *checker.SizeEstimate { return nil }

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

// UpperCallCost returns, for the few calls whose apiserver estimate
// (EstimateCallCost) can be below the actual cost CallCost charges, an
// estimate that bounds the actual cost; nil for every other call. vapkit
// runs an expression untracked only on a bound, so it needs the larger
// figure where upstream's two disagree.
func (e *CostEstimator) UpperCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	switch function {
	case "validate":
		// The estimate assumes a regex of at most 128 bytes and no +1 on
		// the string length; the charge uses the format's own size (the
		// URI pattern's is 1103) and adds one.
		if len(args) >= 1 {
			str := e.sizeEstimate(args[0]).Add(checker.SizeEstimate{Min: 1, Max: 1}).
				MultiplyByCostFactor(common.StringTraversalCostFactor)
			re := checker.SizeEstimate{Min: 0, Max: uint64(maxFormatRegexSize())}.
				MultiplyByCostFactor(common.RegexStringLengthCostFactor)
			return &checker.CallEstimate{CostEstimate: str.Multiply(re)}
		}
	case "isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes":
		// The charge traverses the receiver to its leaves; the estimate
		// counts one per element, which holds only for elements without
		// parts: scalars, and strings and bytes whose length it adds.
		if target != nil && !flatElements(*target) {
			return unbounded()
		}
	case "join":
		// The charge is two tenths of the result's length, the estimate
		// one tenth; and the estimate sizes the result from the element
		// type, which a dyn list lacks: its strings are sized by path.
		if target != nil {
			el := listElementNode(*target)
			if el == nil {
				items := &itemsNode{t: types.DynType}
				if p := (*target).Path(); p != nil {
					items.path = append(append(make([]string, 0, len(p)+1), p...), "@items")
				}
				el = items
			}
			sz := e.joinSize(*target, e.sizeEstimate(el), args)
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(2 * common.StringTraversalCostFactor), ResultSize: &sz}
		}
	}
	return nil
}

// flatElements reports whether traversing list costs at most one per
// element plus the length of string or bytes elements: its elements are
// statically known to hold no lists or maps. A receiver without element
// type (dyn, or a string for indexOf) may be either.
func flatElements(list checker.AstNode) bool {
	el := listElementNode(list)
	if el == nil {
		return false
	}
	switch el.Type().Kind() {
	case types.BoolKind, types.IntKind, types.UintKind, types.DoubleKind, types.StringKind, types.BytesKind,
		types.NullTypeKind, types.TimestampKind, types.DurationKind:
		return true
	case types.OpaqueKind:
		return true // Kubernetes values (quantity, ip, ...) cost one each
	}
	return false
}

func unbounded() *checker.CallEstimate {
	return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 0, Max: math.MaxUint64}}
}

// maxFormatRegexSize is the largest regex size of any named format.
func maxFormatRegexSize() int {
	n := 0
	for _, name := range formatNames {
		if f, ok := lookupFormat(name); ok {
			n = max(n, f.MaxRegexSize)
		}
	}
	return n
}
