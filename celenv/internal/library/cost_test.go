package library

import (
	"math"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
)

// costCase is one expression with its estimated cost (with
// testSizeEstimator), its actual cost under upstream's test program options
// (cost tracking only) and its actual cost under the options the API server
// compiles VAP expressions with (cel.OptOptimize folds constant list and map
// literals and type conversions, which then cost nothing).
type costCase struct {
	expr      string
	estimate  checker.CostEstimate
	actual    uint64
	optimized uint64
}

func est(lo, hi uint64) checker.CostEstimate { return checker.CostEstimate{Min: lo, Max: hi} }

// costCases are the cases of apiserver pkg/cel/library/cost_test.go, but
// the authz ones (tested in package celenv) and jsonpatch (not available to
// VAP). The figures were obtained by running apiserver v0.37.2's
// CostEstimator on each expression in both program configurations.
var costCases = []costCase{
	// ListsCost
	{`[1, 2, 3, 4, 5].sum()`, est(15, 15), 15, 5},
	{`[uint(1), uint(2), uint(3), uint(4), uint(5)].sum()`, est(20, 20), 20, 5},
	{`[1.0, 2.0, 3.0, 4.0, 5.0].sum()`, est(15, 15), 15, 5},
	{`[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')].sum()`, est(20, 20), 20, 5},
	{`[1, 2, 3, 4, 5].isSorted()`, est(15, 15), 15, 5},
	{`[uint(1), uint(2), uint(3), uint(4), uint(5)].isSorted()`, est(20, 20), 20, 5},
	{`[1.0, 2.0, 3.0, 4.0, 5.0].isSorted()`, est(15, 15), 15, 5},
	{`[false, true, false, true, false].isSorted()`, est(15, 15), 15, 5},
	{`['012345678901', '012345678901', '012345678901', '012345678901', '012345678901'].isSorted()`, est(15, 25), 15, 5},
	{`[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')].isSorted()`, est(25, 35), 25, 5},
	{`[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')].isSorted()`, est(20, 20), 20, 5},
	{`[timestamp('2011-01-01T00:00:00.000+01:00'), timestamp('2011-01-02T00:00:00.000+01:00'), timestamp('2011-01-03T00:00:00.000+01:00'), timestamp('2011-01-04T00:00:00.000+01:00'), timestamp('2011-01-05T00:00:00.000+01:00')].isSorted()`, est(20, 20), 20, 5},
	{`[1, 2, 3, 4, 5].max()`, est(15, 15), 15, 5},
	{`[uint(1), uint(2), uint(3), uint(4), uint(5)].max()`, est(20, 20), 20, 5},
	{`[1.0, 2.0, 3.0, 4.0, 5.0].max()`, est(15, 15), 15, 5},
	{`[false, true, false, true, false].max()`, est(15, 15), 15, 5},
	{`['012345678901', '012345678901', '012345678901', '012345678901', '012345678901'].max()`, est(15, 25), 15, 5},
	{`[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')].max()`, est(25, 35), 25, 5},
	{`[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')].max()`, est(20, 20), 20, 5},
	{`[timestamp('2011-01-01T00:00:00.000+01:00'), timestamp('2011-01-02T00:00:00.000+01:00'), timestamp('2011-01-03T00:00:00.000+01:00'), timestamp('2011-01-04T00:00:00.000+01:00'), timestamp('2011-01-05T00:00:00.000+01:00')].max()`, est(20, 20), 20, 5},
	{`[1, 2, 3, 4, 5].min()`, est(15, 15), 15, 5},
	{`[uint(1), uint(2), uint(3), uint(4), uint(5)].min()`, est(20, 20), 20, 5},
	{`[1.0, 2.0, 3.0, 4.0, 5.0].min()`, est(15, 15), 15, 5},
	{`[false, true, false, true, false].min()`, est(15, 15), 15, 5},
	{`['012345678901', '012345678901', '012345678901', '012345678901', '012345678901'].min()`, est(15, 25), 15, 5},
	{`[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')].min()`, est(25, 35), 25, 5},
	{`[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')].min()`, est(20, 20), 20, 5},
	{`[timestamp('2011-01-01T00:00:00.000+01:00'), timestamp('2011-01-02T00:00:00.000+01:00'), timestamp('2011-01-03T00:00:00.000+01:00'), timestamp('2011-01-04T00:00:00.000+01:00'), timestamp('2011-01-05T00:00:00.000+01:00')].min()`, est(20, 20), 20, 5},
	// IndexOfCost
	{`[1, 2, 3, 4, 5].indexOf(3)`, est(15, 15), 15, 5},
	{`[uint(1), uint(2), uint(3), uint(4), uint(5)].indexOf(uint(3))`, est(21, 21), 21, 5},
	{`[1.0, 2.0, 3.0, 4.0, 5.0].indexOf(3.0)`, est(15, 15), 15, 5},
	{`[false, true, false, true, false].indexOf(true)`, est(15, 15), 15, 5},
	{`['012345678901', '012345678901', '012345678901', '012345678901', '012345678901'].indexOf('x')`, est(15, 25), 15, 5},
	{`[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')].indexOf(bytes('x'))`, est(26, 36), 26, 5},
	{`[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')].indexOf(duration('3s'))`, est(21, 21), 21, 5},
	{`[timestamp('2011-01-01T00:00:00.000+01:00'), timestamp('2011-01-02T00:00:00.000+01:00'), timestamp('2011-01-03T00:00:00.000+01:00'), timestamp('2011-01-04T00:00:00.000+01:00'), timestamp('2011-01-05T00:00:00.000+01:00')].indexOf(timestamp('2011-01-03T00:00:00.000+01:00'))`, est(21, 21), 21, 5},
	{`'01234567890123456789012345678901234567890123456789'.indexOf('123')`, est(5, 5), 5, 5},
	{`[1, 2, 3, 4, 5].lastIndexOf(3)`, est(15, 15), 15, 5},
	{`[uint(1), uint(2), uint(3), uint(4), uint(5)].lastIndexOf(uint(3))`, est(21, 21), 21, 5},
	{`[1.0, 2.0, 3.0, 4.0, 5.0].lastIndexOf(3.0)`, est(15, 15), 15, 5},
	{`[false, true, false, true, false].lastIndexOf(true)`, est(15, 15), 15, 5},
	{`['012345678901', '012345678901', '012345678901', '012345678901', '012345678901'].lastIndexOf('x')`, est(15, 25), 15, 5},
	{`[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')].lastIndexOf(bytes('x'))`, est(26, 36), 26, 5},
	{`[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')].lastIndexOf(duration('3s'))`, est(21, 21), 21, 5},
	{`[timestamp('2011-01-01T00:00:00.000+01:00'), timestamp('2011-01-02T00:00:00.000+01:00'), timestamp('2011-01-03T00:00:00.000+01:00'), timestamp('2011-01-04T00:00:00.000+01:00'), timestamp('2011-01-05T00:00:00.000+01:00')].lastIndexOf(timestamp('2011-01-03T00:00:00.000+01:00'))`, est(21, 21), 21, 5},
	{`'01234567890123456789012345678901234567890123456789'.lastIndexOf('123')`, est(5, 5), 5, 5},
	// IncludesCost
	{`[1, 2, 3, 4, 5].includes(3)`, est(15, 15), 15, 5},
	{`[uint(1), uint(2), uint(3), uint(4), uint(5)].includes(uint(3))`, est(21, 21), 21, 5},
	{`[1.0, 2.0, 3.0, 4.0, 5.0].includes(3.0)`, est(15, 15), 15, 5},
	{`[false, true, false, true, false].includes(true)`, est(15, 15), 15, 5},
	{`['012345678901', '012345678901', '012345678901', '012345678901', '012345678901'].includes('x')`, est(15, 25), 15, 5},
	{`[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')].includes(bytes('x'))`, est(26, 36), 26, 5},
	{`[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')].includes(duration('3s'))`, est(21, 21), 21, 5},
	{`[timestamp('2011-01-01T00:00:00.000+01:00'), timestamp('2011-01-02T00:00:00.000+01:00'), timestamp('2011-01-03T00:00:00.000+01:00'), timestamp('2011-01-04T00:00:00.000+01:00'), timestamp('2011-01-05T00:00:00.000+01:00')].includes(timestamp('2011-01-03T00:00:00.000+01:00'))`, est(21, 21), 21, 5},
	{`'01234567890123456789012345678901234567890123456789'.includes('123')`, est(50, 50), 5, 5},
	// URLsCost
	{`url('https:://kubernetes.io/').getScheme()`, est(4, 4), 4, 4},
	{`url('https:://kubernetes.io/').getHostname()`, est(4, 4), 4, 4},
	{`url('https:://kubernetes.io/').getHost()`, est(4, 4), 4, 4},
	{`url('https:://kubernetes.io/').getPort()`, est(4, 4), 4, 4},
	{`url('https:://kubernetes.io/').getEscapedPath()`, est(4, 4), 4, 4},
	{`url('https:://kubernetes.io/').getQuery()`, est(4, 4), 4, 4},
	{`url('https:://kubernetes.io/') == url('https:://kubernetes.io/')`, est(7, 9), 7, 7},
	{`url('https:://kubernetes.io/') == url('http://x.b')`, est(5, 5), 5, 5},
	// IPCost
	{`ip('192.168.0.1')`, est(2, 2), 2, 2},
	{`ip('2001:db8:3333:4444:5555:6666:7777:8888')`, est(4, 4), 4, 4},
	{`ip('192.168.0.1').family()`, est(3, 3), 3, 3},
	{`ip('2001:db8:3333:4444:5555:6666:7777:8888').family()`, est(5, 5), 5, 5},
	{`ip('192.168.0.1').isUnspecified()`, est(3, 3), 3, 3},
	{`ip('2001:db8:3333:4444:5555:6666:7777:8888').isUnspecified()`, est(5, 5), 5, 5},
	{`ip('192.168.0.1').isLoopback()`, est(3, 3), 3, 3},
	{`ip('2001:db8:3333:4444:5555:6666:7777:8888').isLoopback()`, est(5, 5), 5, 5},
	{`ip('192.168.0.1').isLinkLocalMulticast()`, est(3, 3), 3, 3},
	{`ip('2001:db8:3333:4444:5555:6666:7777:8888').isLinkLocalMulticast()`, est(5, 5), 5, 5},
	{`ip('192.168.0.1').isLinkLocalUnicast()`, est(3, 3), 3, 3},
	{`ip('2001:db8:3333:4444:5555:6666:7777:8888').isLinkLocalUnicast()`, est(5, 5), 5, 5},
	{`ip('192.168.0.1').isGlobalUnicast()`, est(3, 3), 3, 3},
	{`ip('2001:db8:3333:4444:5555:6666:7777:8888').isGlobalUnicast()`, est(5, 5), 5, 5},
	{`ip('192.168.0.1') == ip('192.168.0.1')`, est(5, 5), 5, 5},
	{`ip('2001:db8:3333:4444:5555:6666:7777:8888') == ip('192.168.0.1')`, est(7, 7), 7, 7},
	// IPIsCanonicalCost
	{`ip.isCanonical('192.168.0.1')`, est(3, 3), 3, 3},
	{`ip.isCanonical('2001:db8:3333:4444:5555:6666:7777:8888')`, est(8, 8), 8, 8},
	{`ip.isCanonical('2001:db8::abcd')`, est(3, 3), 3, 3},
	// CIDRCost
	{`cidr('192.168.0.0/16')`, est(2, 2), 2, 2},
	{`cidr('192.168.0.0/16').ip()`, est(3, 3), 3, 3},
	{`cidr('192.168.0.0/16').prefixLength()`, est(3, 3), 3, 3},
	{`cidr('192.168.0.0/16').masked()`, est(3, 3), 3, 3},
	{`cidr('192.168.0.0/16') == cidr('2001:db8::/32')`, est(5, 5), 5, 5},
	{`cidr('192.168.0.0/16').containsCIDR(cidr('192.0.0.0/30'))`, est(7, 11), 7, 7},
	{`cidr('192.168.0.0/16').containsCIDR(cidr('192.168.0.0/16'))`, est(7, 11), 7, 7},
	{`cidr('192.168.0.0/16').containsCIDR('192.0.0.0/30')`, est(7, 11), 7, 7},
	{`cidr('192.168.0.0/16').containsCIDR('192.168.0.0/16')`, est(7, 11), 7, 7},
	{`cidr('192.168.0.0/16').containsIP(ip('192.0.0.1'))`, est(4, 7), 4, 4},
	{`cidr('192.168.0.0/16').containsIP(ip('192.169.0.1'))`, est(5, 8), 5, 5},
	{`cidr('192.168.0.0/16').containsIP(ip('192.169.169.250'))`, est(5, 8), 5, 5},
	{`cidr('192.168.0.0/16').containsIP('192.0.0.1')`, est(4, 7), 4, 4},
	{`cidr('192.168.0.0/16').containsIP('192.169.0.1')`, est(5, 8), 5, 5},
	{`cidr('2001:db8::/32')`, est(2, 2), 2, 2},
	{`cidr('2001:db8::/32').ip()`, est(3, 3), 3, 3},
	{`cidr('2001:db8::/32').prefixLength()`, est(3, 3), 3, 3},
	{`cidr('2001:db8::/32').masked()`, est(3, 3), 3, 3},
	{`cidr('2001:db8::/32') == cidr('2001:db8::/32')`, est(5, 5), 5, 5},
	{`cidr('2001:db8::/32').containsCIDR(cidr('2001:db8::/126'))`, est(7, 11), 7, 7},
	{`cidr('2001:db8::/32').containsCIDR(cidr('2001:db8::/32'))`, est(7, 11), 7, 7},
	{`cidr('2001:db8::/32').containsCIDR('2001:db8::/126')`, est(7, 11), 7, 7},
	{`cidr('2001:db8::/32').containsCIDR('2001:db8::/32')`, est(7, 11), 7, 7},
	{`cidr('2001:db8::/32').containsIP(ip('2001:db8:3333:4444:5555:6666:7777:8888'))`, est(7, 10), 7, 7},
	{`cidr('2001:db8::/32').containsIP(ip('2001:db8::1'))`, est(5, 8), 5, 5},
	{`cidr('2001:db8::/32').containsIP('2001:db8:3333:4444:5555:6666:7777:8888')`, est(7, 10), 7, 7},
	{`cidr('2001:db8::/32').containsIP('2001:db8::1')`, est(5, 8), 5, 5},
	// StringLibrary
	{`'ABCDEFGHIJ abcdefghij'.lowerAscii()`, est(3, 3), 3, 3},
	{`'ABCDEFGHIJ abcdefghij'.lowerAscii() == 'abcdefghij ABCDEFGHIJ'.lowerAscii()`, est(7, 9), 9, 9},
	{`'ABCDEFGHIJ abcdefghij'.upperAscii()`, est(3, 3), 3, 3},
	{`'ABCDEFGHIJ abcdefghij'.upperAscii() == 'abcdefghij ABCDEFGHIJ'.upperAscii()`, est(7, 9), 9, 9},
	{`strings.quote('ABCDEFGHIJ abcdefghij')`, est(3, 3), 3, 3},
	{`strings.quote('ABCDEFGHIJ abcdefghij') == strings.quote('ABCDEFGHIJ abcdefghij')`, est(7, 11), 9, 9},
	{`'abc 123 def 123'.replace('123', '456')`, est(3, 3), 3, 3},
	{`'abc 123 def 123'.replace('', 'x')`, est(3, 3), 3, 3},
	{`'abc 123 def 123'.replace('123', '')`, est(3, 3), 3, 3},
	{`'abc 123 def 123'.replace('123', '456', 1)`, est(3, 3), 3, 3},
	{`'abc 123 def 123'.split(' ')`, est(3, 3), 3, 3},
	{`'abc 123 def 123'.split(' ', 1)`, est(3, 3), 3, 3},
	{`'abc 123 def 123'.substring(5)`, est(2, 2), 2, 2},
	{`'abc 123 def 123'.substring(5, 8)`, est(2, 2), 2, 2},
	{`'  abc 123 def 123  '.trim()`, est(2, 2), 2, 2},
	{`['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join(' ')`, est(11, 23), 15, 5},
	{`['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join()`, est(10, 22), 13, 3},
	{`'abc 123 def 123'.find('123')`, est(2, 2), 2, 2},
	{`'abc 123 def 123'.findAll('123')`, est(2, 2), 2, 2},
	{`'abc 123 def 123'.findAll('123', 1)`, est(2, 2), 2, 2},
	// QuantityCost
	{`quantity("12Mi")`, est(1, 1), 1, 1},
	{`isQuantity("20")`, est(1, 1), 1, 1},
	{`isQuantity("20M")`, est(1, 1), 1, 1},
	{`quantity("200M") == quantity("200M")`, est(3, 3), 3, 3},
	{`quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")`, est(3, 6), 6, 6},
	{`quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && quantity("0.002G") == quantity("2000k")`, est(3, 9), 9, 9},
	{`quantity("50M").isLessThan(quantity("50Mi"))`, est(3, 3), 3, 3},
	{`quantity("50Mi").isGreaterThan(quantity("50M"))`, est(3, 3), 3, 3},
	{`quantity("200M").compareTo(quantity("0.2G")) > 0`, est(4, 4), 4, 4},
	{`quantity("50k").add(quantity("20")) == quantity("50.02k")`, est(5, 5), 5, 5},
	{`quantity("50k").sub(quantity("20")) == quantity("49.98k")`, est(5, 5), 5, 5},
	{`quantity("50k").sub(20) == quantity("49980")`, est(4, 4), 4, 4},
	{`quantity("50k").add(20).sub(quantity("100k")).asInteger() > 0`, est(6, 6), 6, 6},
	{`quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() > 0`, est(7, 7), 7, 7},
	{`quantity("50k").asInteger() > 0`, est(3, 3), 3, 3},
	{`quantity("50").isInteger()`, est(2, 2), 2, 2},
	{`quantity("50.703k").asApproximateFloat() > 0.0`, est(3, 3), 3, 3},
	// NameFormatCost
	{`format.named("dns1123subdomain")`, est(1, 1), 1, 1},
	{`format.named("dns1123Subdomain").value().validate("my-name")`, est(34, 34), 17, 17},
	{`format.named("dns1123Label").value().validate("my-name")`, est(34, 34), 10, 10},
	{`format.named("dns1123Label").value() == format.named("dns1123Label").value()`, est(5, 11), 5, 5},
	// SetsCost
	{`sets.contains([], [])`, est(21, 21), 21, 1},
	{`sets.contains([1], [])`, est(21, 21), 21, 1},
	{`sets.contains([1], [1])`, est(22, 22), 22, 2},
	{`sets.contains([1], [1, 1])`, est(23, 23), 23, 3},
	{`sets.contains([1, 1], [1])`, est(23, 23), 23, 3},
	{`sets.contains([2, 1], [1])`, est(23, 23), 23, 3},
	{`sets.contains([1, 2, 3, 4], [2, 3])`, est(29, 29), 29, 9},
	{`sets.contains([1], [1.0, 1])`, est(23, 23), 23, 3},
	{`sets.contains([1, 2], [2u, 2.0])`, est(25, 25), 25, 5},
	{`sets.contains([1, 2u], [2, 2.0])`, est(25, 25), 25, 5},
	{`sets.contains([1, 2.0, 3u], [1.0, 2u, 3])`, est(30, 30), 30, 10},
	{`sets.contains([[1], [2, 3]], [[2, 3.0]])`, est(53, 53), 53, 3},
	{`!sets.contains([1], [2])`, est(23, 23), 23, 3},
	{`!sets.contains([1], [1, 2])`, est(24, 24), 24, 4},
	{`!sets.contains([1], ["1", 1])`, est(24, 24), 24, 4},
	{`!sets.contains([1], [1.1, 1u])`, est(24, 24), 24, 4},
	{`sets.equivalent([], [])`, est(21, 21), 21, 1},
	{`sets.equivalent([1], [1])`, est(23, 23), 23, 3},
	{`sets.equivalent([1], [1, 1])`, est(25, 25), 25, 5},
	{`sets.equivalent([1, 1], [1])`, est(25, 25), 25, 5},
	{`sets.equivalent([1], [1u, 1.0])`, est(25, 25), 25, 5},
	{`sets.equivalent([1, 2, 3], [3u, 2.0, 1])`, est(39, 39), 39, 19},
	{`sets.equivalent([[1.0], [2, 3]], [[1], [2, 3.0]])`, est(69, 69), 69, 9},
	{`!sets.equivalent([2, 1], [1])`, est(26, 26), 26, 6},
	{`!sets.equivalent([1], [1, 2])`, est(26, 26), 26, 6},
	{`!sets.equivalent([1, 2], [2u, 2, 2.0])`, est(34, 34), 34, 14},
	{`!sets.equivalent([1, 2], [1u, 2, 2.3])`, est(34, 34), 34, 14},
	{`sets.intersects([1], [1])`, est(22, 22), 22, 2},
	{`sets.intersects([1], [1, 1])`, est(23, 23), 23, 3},
	{`sets.intersects([1, 1], [1])`, est(23, 23), 23, 3},
	{`sets.intersects([2, 1], [1])`, est(23, 23), 23, 3},
	{`sets.intersects([1], [1, 2])`, est(23, 23), 23, 3},
	{`sets.intersects([1], [1.0, 2])`, est(23, 23), 23, 3},
	{`sets.intersects([1, 2], [2u, 2, 2.0])`, est(27, 27), 27, 7},
	{`sets.intersects([1, 2], [1u, 2, 2.3])`, est(27, 27), 27, 7},
	{`sets.intersects([[1], [2, 3]], [[1, 2], [2, 3.0]])`, est(65, 65), 65, 5},
	{`!sets.intersects([], [])`, est(22, 22), 22, 2},
	{`!sets.intersects([1], [])`, est(22, 22), 22, 2},
	{`!sets.intersects([1], [2])`, est(23, 23), 23, 3},
	{`!sets.intersects([1], ["1", 2])`, est(24, 24), 24, 4},
	{`!sets.intersects([1], [1.1, 2u])`, est(24, 24), 24, 4},
	// SemverCost
	{`semver("1.0.0")`, est(1, 1), 1, 1},
	{`semver("1234.56789012345.67890123456789")`, est(4, 4), 4, 4},
	{`isSemver("1.0.0")`, est(1, 1), 1, 1},
	{`isSemver("1234.56789012345.67890123456789")`, est(4, 4), 4, 4},
	{`semver("1.2.3").major()`, est(2, 2), 2, 2},
	{`semver("1.2.3").minor()`, est(2, 2), 2, 2},
	{`semver("1.2.3").patch()`, est(2, 2), 2, 2},
	{`semver("1.0.0").isLessThan(semver("1.1.0"))`, est(3, 3), 3, 3},
	{`semver("1.1.0").isGreaterThan(semver("1.0.0"))`, est(3, 3), 3, 3},
	{`semver("1.0.0").compareTo(semver("1.2.3"))`, est(3, 3), 3, 3},
	// TwoVariableComprehensionCost
	{`{'a': 1, 'b': 2}.all(k, v, v > 0)`, est(37, 41), 41, 11},
	{`{'a': 1, 'b': 2}.exists(k, v, v > 0)`, est(39, 43), 40, 10},
	{`{'a': 1, 'b': 2}.existsOne(k, v, v > 0)`, est(38, 40), 40, 10},
	{`{'a': 1, 'b': 2}.transformMap(k, v, v + 1)`, est(71, 71), 71, 11},
	{`{'a': 1, 'b': 2}.transformMap(k, v, v < 5, v + 1)`, est(67, 75), 75, 15},
	{`{'a': 1, 'b': 2}.transformMapEntry(k, v, {k: v + 1})`, est(131, 131), 131, 71},
	{`{'a': 1, 'b': 2}.transformMapEntry(k, v, v < 5, {k: v + 1})`, est(67, 135), 135, 75},
	{`[1, 2].all(i, v, v > 0)`, est(17, 21), 21, 11},
	{`[1, 2].exists(i, v, v > 0)`, est(19, 23), 20, 10},
	{`[1, 2].existsOne(i, v, v > 0)`, est(18, 20), 20, 10},
	{`[1, 2].transformList(i, v, v + 1)`, est(49, 49), 49, 29},
	{`[1, 2].transformList(i, v, v < 5, v + 1)`, est(27, 53), 53, 33},
}

// testSizeEstimator bounds strings and bytes of unknown size to 12, as
// upstream's testCostEstimator.
type testSizeEstimator struct{}

func (testSizeEstimator) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	if t := n.Type(); t != nil && (t.Kind() == types.StringKind || t.Kind() == types.BytesKind) {
		return &checker.SizeEstimate{Min: 0, Max: 12}
	}
	return nil
}

func (testSizeEstimator) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// newCostEnv returns upstream's cost test environment without the authz and
// jsonpatch libraries.
func newCostEnv(t *testing.T) *cel.Env {
	t.Helper()
	env, err := cel.NewEnv(
		ext.Strings(ext.StringsVersion(2)),
		URLs(),
		Regex(),
		Lists(1),
		Quantity(),
		ext.Sets(),
		IP(),
		CIDR(),
		Format(),
		cel.OptionalTypes(),
		cel.CostEstimatorOptions(checker.PresenceTestHasCost(false)),
		ext.TwoVarComprehensions(),
		Semver(1),
	)
	if err != nil {
		t.Fatalf("cel.NewEnv() = %v", err)
	}
	return env
}

func TestCost(t *testing.T) {
	env := newCostEnv(t)
	estimator := &CostEstimator{SizeEstimator: testSizeEstimator{}}
	programs := []struct {
		name string
		opts []cel.ProgramOption
		want func(costCase) uint64
	}{{
		name: "upstream test options",
		opts: []cel.ProgramOption{cel.CostTracking(estimator)},
		want: func(tc costCase) uint64 { return tc.actual },
	}, {
		name: "VAP options",
		opts: []cel.ProgramOption{
			cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost),
			cel.CostTrackerOptions(interpreter.PresenceTestHasCost(false)),
			cel.CostTracking(estimator),
		},
		want: func(tc costCase) uint64 { return tc.optimized },
	}}
	for _, tc := range costCases {
		t.Run(tc.expr, func(t *testing.T) {
			t.Parallel()
			ast, iss := env.Compile(tc.expr)
			if iss.Err() != nil {
				t.Fatalf("Compile(%q) = %v", tc.expr, iss.Err())
			}
			got, err := env.EstimateCost(ast, estimator)
			if err != nil {
				t.Fatalf("EstimateCost(%q) = %v", tc.expr, err)
			}
			if got != tc.estimate {
				t.Errorf("EstimateCost(%q) = %+v, want %+v", tc.expr, got, tc.estimate)
			}
			for _, p := range programs {
				prg, err := env.Program(ast, p.opts...)
				if err != nil {
					t.Fatalf("%s: Program(%q) = %v", p.name, tc.expr, err)
				}
				_, det, err := prg.Eval(cel.NoVars())
				if err != nil {
					t.Fatalf("%s: Eval(%q) = %v", p.name, tc.expr, err)
				}
				if got, want := *det.ActualCost(), p.want(tc); got != want {
					t.Errorf("%s: actual cost of %q = %d, want %d", p.name, tc.expr, got, want)
				}
			}
		})
	}
}

// sizeNode is an AST node with a fixed computed size and type.
type sizeNode struct {
	size checker.SizeEstimate
	typ  *types.Type
}

func (n sizeNode) Path() []string                      { return nil }
func (n sizeNode) Type() *types.Type                   { return n.typ }
func (n sizeNode) Expr() ast.Expr                      { return nil }
func (n sizeNode) ComputedSize() *checker.SizeEstimate { return &n.size }

func TestEstimateReplaceSize(t *testing.T) {
	exact := func(n uint64) checker.SizeEstimate { return checker.SizeEstimate{Min: n, Max: n} }
	tests := []struct {
		name         string
		target       checker.SizeEstimate
		oldSz, newSz checker.SizeEstimate
		want         checker.SizeEstimate
	}{
		{"replace empty with char", exact(3), exact(0), exact(1), exact(7)},
		{"maybe replace char with empty", exact(3), exact(1), exact(0), checker.SizeEstimate{Min: 0, Max: 3}},
		{"maybe replace repeated", exact(4), exact(2), exact(4), checker.SizeEstimate{Min: 4, Max: 8}},
		{"maybe replace empty", exact(4), checker.SizeEstimate{Min: 0, Max: 1}, checker.SizeEstimate{Min: 0, Max: 2}, checker.SizeEstimate{Min: 0, Max: 14}},
		{"replace non-empty size range, maybe larger", exact(4), checker.SizeEstimate{Min: 1, Max: 1}, checker.SizeEstimate{Min: 1, Max: 2}, checker.SizeEstimate{Min: 4, Max: 8}},
		{"replace non-empty size range, maybe smaller", exact(4), checker.SizeEstimate{Min: 1, Max: 2}, checker.SizeEstimate{Min: 1, Max: 1}, checker.SizeEstimate{Min: 2, Max: 4}},
		{"unbounded input", checker.SizeEstimate{Min: 0, Max: math.MaxUint64}, exact(0), exact(1), checker.SizeEstimate{Min: 1, Max: math.MaxUint64}},
	}
	e := &CostEstimator{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var target checker.AstNode = sizeNode{size: tc.target}
			got := e.EstimateCallCost("replace", "", &target, []checker.AstNode{sizeNode{size: tc.oldSz}, sizeNode{size: tc.newSz}})
			if got == nil || got.ResultSize == nil {
				t.Fatalf("EstimateCallCost(replace) = %+v, want a result size", got)
			}
			if *got.ResultSize != tc.want {
				t.Errorf("EstimateCallCost(replace).ResultSize = %+v, want %+v", *got.ResultSize, tc.want)
			}
		})
	}
}

// namedVal is a stand-in for values of types defined elsewhere (the authz
// values of package celenv).
type namedVal struct {
	ref.Val
	typ *types.Type
}

func (v namedVal) Type() ref.Type { return v.typ }

func TestEqualityCost(t *testing.T) {
	env := newCostEnv(t)
	value := func(expr string) ref.Val {
		t.Helper()
		ast, iss := env.Compile(expr)
		if iss.Err() != nil {
			t.Fatalf("Compile(%q) = %v", expr, iss.Err())
		}
		prg, err := env.Program(ast)
		if err != nil {
			t.Fatalf("Program(%q) = %v", expr, err)
		}
		v, _, err := prg.Eval(cel.NoVars())
		if err != nil {
			t.Fatalf("Eval(%q) = %v", expr, err)
		}
		return v
	}
	authzType := func(name string) *types.Type { return types.NewObjectType("kubernetes.authorization." + name) }
	tests := []struct {
		name     string
		val      ref.Val
		typ      *types.Type
		estimate checker.CostEstimate
	}{
		{"quantity", value("quantity('1')"), QuantityType, est(1, 1)},
		{"semver", value("semver('1.0.0')"), SemverType, est(1, 1)},
		{"ip", value("ip('::1')"), IPType, est(1, 1)},
		{"cidr", value("cidr('::1/128')"), CIDRType, est(1, 1)},
		{"format", value("format.dns1123Label()"), FormatType, est(1, 7)},
		{"url", value("url('https://kubernetes.io/docs')"), URLType, est(1, 10)},
		{"authorizer", namedVal{typ: authzType("Authorizer")}, authzType("Authorizer"), est(1, 1)},
		{"path check", namedVal{typ: authzType("PathCheck")}, authzType("PathCheck"), est(1, 1)},
		{"group check", namedVal{typ: authzType("GroupCheck")}, authzType("GroupCheck"), est(1, 1)},
		{"resource check", namedVal{typ: authzType("ResourceCheck")}, authzType("ResourceCheck"), est(1, 1)},
		{"decision", namedVal{typ: authzType("Decision")}, authzType("Decision"), est(1, 1)},
	}
	e := &CostEstimator{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := e.CallCost("_==_", "equals", []ref.Val{tc.val, tc.val}, types.True); got == nil || *got != 1 {
				t.Errorf("CallCost(_==_, %s) = %v, want 1", tc.name, got)
			}
			n := sizeNode{size: checker.SizeEstimate{Min: 10, Max: 100}, typ: tc.typ}
			got := e.EstimateCallCost("_==_", "equals", nil, []checker.AstNode{n, n})
			if got == nil || got.CostEstimate != tc.estimate {
				t.Errorf("EstimateCallCost(_==_, %s) = %+v, want %+v", tc.name, got, tc.estimate)
			}
		})
	}
	// Other values get cel-go's default.
	if got := e.CallCost("_==_", "equals", []ref.Val{types.String("a"), types.String("a")}, types.True); got != nil {
		t.Errorf("CallCost(_==_, string) = %v, want nil", *got)
	}
	n := sizeNode{typ: types.StringType}
	if got := e.EstimateCallCost("_==_", "equals", nil, []checker.AstNode{n, n}); got != nil {
		t.Errorf("EstimateCallCost(_==_, string) = %+v, want nil", got)
	}
}

func TestCallCostRobust(t *testing.T) {
	// Wrong arity or argument types fall back to cel-go's defaults instead
	// of failing.
	e := &CostEstimator{}
	for _, fn := range []string{"fieldSelector", "url", "replace", "join", "find", "cidr", "ip", "ip.isCanonical",
		"containsIP", "containsCIDR", "quantity", "validate", "_==_"} {
		t.Run(fn, func(t *testing.T) {
			if got := e.CallCost(fn, "", nil, nil); got != nil {
				t.Errorf("CallCost(%s, no args) = %d, want nil", fn, *got)
			}
		})
	}
	if got := e.CallCost("validate", "", []ref.Val{types.String("x"), types.String("y")}, nil); got != nil {
		t.Errorf("CallCost(validate, non-format) = %d, want nil", *got)
	}
	if got := e.CallCost("sum", "", nil, nil); got == nil || *got != 0 {
		t.Errorf("CallCost(sum, no args) = %v, want 0", got)
	}
}

func TestTraversalCost(t *testing.T) {
	tests := []struct {
		name string
		val  ref.Val
		want uint64
	}{
		{"string rounds down", types.String("0123456789012345678"), 1},
		{"string counts bytes", types.String("ééééé"), 1},
		{"bytes", types.Bytes("01234567890123456789"), 2},
		{"int", types.Int(7), 1},
		{"list", types.DefaultTypeAdapter.NativeToValue([]any{"0123456789", 1, 2}), 3},
		{"map", types.DefaultTypeAdapter.NativeToValue(map[string]any{"0123456789": "01234567890123456789"}), 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := traversalCost(tc.val); got != tc.want {
				t.Errorf("traversalCost(%v) = %d, want %d", tc.val, got, tc.want)
			}
		})
	}
}
