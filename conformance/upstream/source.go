//go:build !vapkit_harness

package upstream

import "embed"

// Source holds this package's Go files. Package versions copies the files
// an older Kubernetes version builds into that version's harness module
// (see "Older versions" in the package documentation).
//
//go:embed *.go
var Source embed.FS
