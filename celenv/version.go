package celenv

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a Kubernetes minor version of the 1.x line, such as 37 for
// Kubernetes 1.37. It names the API server's binary version, the version
// whose behaviour vapkit imitates, and so selects which CEL libraries an
// environment offers, as that API server does:
//
//   - [StoredExpressions] (evaluating policies, whatever their age) offers
//     every library the binary has: those introduced at or before Version
//     and not removed by it;
//   - [NewExpressions] (what create and update validation accepts in new
//     expressions) offers only the libraries of the compatibility version,
//     one minor lower, so that a server rolled back by one minor can still
//     evaluate what was accepted. A 1.37 server stores policies calling
//     `includes` (kubernetes.lists v1, introduced in 1.37) but refuses to
//     accept new ones until 1.38.
//
// Behaviour that changed between versions follows Version as well (for
// example containsCIDR before 1.32); the policy package documentation lists
// every change. The table of which library arrives when is tested by
// TestLibrariesByVersion.
type Version int

// The supported versions. The zero Version means [MaxVersion], the
// version vapkit matches when none is chosen.
const (
	Version1_30 Version = 30
	Version1_31 Version = 31
	Version1_32 Version = 32
	Version1_33 Version = 33
	Version1_34 Version = 34
	Version1_35 Version = 35
	Version1_36 Version = 36
	Version1_37 Version = 37
	// MinVersion and MaxVersion bound the supported range.
	MinVersion = Version1_30
	MaxVersion = Version1_37
)

// String formats v as "1.<minor>".
func (v Version) String() string { return "1." + strconv.Itoa(int(v)) }

// ParseVersion parses "1.33" (or "v1.33") into a Version and checks that it
// is supported.
func ParseVersion(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	minor, ok := strings.CutPrefix(t, "1.")
	if !ok {
		return 0, fmt.Errorf("invalid Kubernetes version %q: want 1.<minor>", s)
	}
	n, err := strconv.Atoi(minor)
	if err != nil {
		return 0, fmt.Errorf("invalid Kubernetes version %q: want 1.<minor>", s)
	}
	v := Version(n)
	if v < MinVersion || v > MaxVersion {
		return 0, fmt.Errorf("unsupported Kubernetes version %s: supported versions are %s to %s", v, MinVersion, MaxVersion)
	}
	return v, nil
}
