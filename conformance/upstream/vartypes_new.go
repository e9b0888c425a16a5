//go:build !vapkit_harness || vapkit_k8s_1_36

package upstream

import apiservercel "k8s.io/apiserver/pkg/cel"

// variablesTemplates returns nothing: from 1.36 (and so at 1.37, this
// module's version) NewCompositedCompiler
// (pkg/admission/plugin/cel/composition.go) gives every policy a variables
// type of its own.
func variablesTemplates() []*apiservercel.DeclType { return nil }
