//go:build vapkit_harness && (vapkit_k8s_1_31 || vapkit_k8s_1_32 || vapkit_k8s_1_33 || vapkit_k8s_1_34)

package upstream

import (
	_ "unsafe" // go:linkname

	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// The plugin's two lazily built composition templates, one per setting of
// the StrictCostEnforcementForVAP gate (functions of
// k8s.io/apiserver/pkg/admission/plugin/policy/validating, plugin.go).
//
//go:linkname templateWithStrictCost k8s.io/apiserver/pkg/admission/plugin/policy/validating.getCompositionEnvTemplateWithStrictCost
func templateWithStrictCost() *plugincel.CompositionEnv

//go:linkname templateWithoutStrictCost k8s.io/apiserver/pkg/admission/plugin/policy/validating.getCompositionEnvTemplateWithoutStrictCost
func templateWithoutStrictCost() *plugincel.CompositionEnv

// variablesTemplates returns the variables types every policy of the
// process shares: NewCompositedCompilerFromTemplate
// (pkg/admission/plugin/cel/composition.go) gives each policy's compiler
// the template's MapType itself, and AddField writes each compiled
// variable's type into it.
func variablesTemplates() []*apiservercel.DeclType {
	return []*apiservercel.DeclType{templateWithStrictCost().MapType, templateWithoutStrictCost().MapType}
}
