package defaulting

import "k8s.io/apimachinery/pkg/runtime"

// groupRegistrations register the defaulting functions of the named
// groups (apps, batch, networking, ...), one function per group version.
var groupRegistrations = []func(*runtime.Scheme){}
