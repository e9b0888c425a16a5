package defaulting

import "k8s.io/apimachinery/pkg/runtime"

// coreRegistrations register the defaulting functions of the core group.
var coreRegistrations = []func(*runtime.Scheme){}
