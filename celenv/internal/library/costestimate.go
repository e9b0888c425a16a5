package library

import (
	"math"
	"strings"

	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
)

// EstimateCallCost implements [checker.CostEstimator]: the estimated cost
// range (and result size where it helps) of a call, or nil for cel-go's
// default. The figures are apiserver's; changing them would change which
// CRD rules upstream accepts.
func (e *CostEstimator) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	if c, ok := fixedCost(function); ok {
		return fixedEstimate(c)
	}
	switch function {
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
			return e.estimateSplit(*target, args)
		}
	case "join":
		if target != nil {
			return e.estimateJoin(*target, args)
		}
	case "find", "findAll":
		if target != nil && len(args) >= 1 {
			return e.estimateFind(*target, args[0])
		}
	case "cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver":
		if len(args) >= 1 {
			return e.traversalEstimate(args[0], common.StringTraversalCostFactor)
		}
	case "ip":
		if overloadID == "cidr_ip" {
			return fixedEstimate(1)
		}
		if len(args) >= 1 {
			return e.traversalEstimate(args[0], common.StringTraversalCostFactor)
		}
	case "ip.isCanonical":
		if len(args) >= 1 {
			return e.traversalEstimate(args[0], 2*common.StringTraversalCostFactor)
		}
	case "containsIP", "containsCIDR":
		if len(args) >= 1 {
			return e.estimateContains(function, overloadID, args[0])
		}
	case "validate":
		if len(args) >= 1 {
			sz := e.sizeEstimate(args[0])
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(common.StringTraversalCostFactor).
				MultiplyByCostFactor(maxNameFormatRegexSize * common.RegexStringLengthCostFactor)}
		}
	case "_==_":
		if len(args) == 2 {
			return estimateEquality(args[0], args[1])
		}
	}
	return nil
}

// fixedEstimate is an estimate of exactly c.
func fixedEstimate(c uint64) *checker.CallEstimate {
	return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: c, Max: c}}
}

// traversalEstimate estimates a traversal of n at factor per unit.
func (e *CostEstimator) traversalEstimate(n checker.AstNode, factor float64) *checker.CallEstimate {
	return &checker.CallEstimate{CostEstimate: e.sizeEstimate(n).MultiplyByCostFactor(factor)}
}

// estimateSplit estimates s.split(sep, limit?): a traversal plus building
// the result, whose elements are at worst one per character, unless a
// literal limit says otherwise.
func (e *CostEstimator) estimateSplit(target checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	sz := e.sizeEstimate(target)
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

// estimateFind estimates s.find(re) and s.findAll(re): matching the
// string against the regex re; the result is no longer than the string.
func (e *CostEstimator) estimateFind(target, re checker.AstNode) *checker.CallEstimate {
	sz := e.sizeEstimate(target)
	strCost := sz.Add(checker.SizeEstimate{Min: 1, Max: 1}).MultiplyByCostFactor(common.StringTraversalCostFactor)
	reCost := e.sizeEstimate(re).MultiplyByCostFactor(common.RegexStringLengthCostFactor)
	return &checker.CallEstimate{
		CostEstimate: strCost.Multiply(reCost),
		ResultSize:   &checker.SizeEstimate{Min: 0, Max: sz.Max},
	}
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

func (n *itemsNode) Path() []string { return n.path }

func (n *itemsNode) Type() *types.Type { return n.t }

func (n *itemsNode) Expr() ast.Expr { return nil }

func (n *itemsNode) ComputedSize() *checker.SizeEstimate { return nil }

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
