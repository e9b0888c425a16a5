//go:build vapkit_harness && vapkit_k8s_1_35

package upstream

import (
	_ "unsafe" // go:linkname

	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// The plugin's lazily built composition template (strict cost is always
// on in 1.35; plugin.go:49).
//
//go:linkname templateWithStrictCost k8s.io/apiserver/pkg/admission/plugin/policy/validating.getCompositionEnvTemplateWithStrictCost
func templateWithStrictCost() *plugincel.CompositionEnv

// variablesTemplates returns the variables type every policy of the
// process shares: NewCompositedCompilerFromTemplate
// (pkg/admission/plugin/cel/composition.go) gives each policy's compiler
// the template's MapType itself, and AddField writes each compiled
// variable's type into it.
func variablesTemplates() []*apiservercel.DeclType {
	return []*apiservercel.DeclType{templateWithStrictCost().MapType}
}
