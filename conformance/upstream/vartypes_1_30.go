//go:build vapkit_harness && vapkit_k8s_1_30

package upstream

import (
	_ "unsafe" // go:linkname

	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// The 1.30 plugin's two composition templates, one per setting of the
// StrictCostEnforcementForVAP gate (package-level variables of
// k8s.io/apiserver/pkg/admission/plugin/policy/validating, plugin.go:46-63).
//
//go:linkname templateWithStrictCost k8s.io/apiserver/pkg/admission/plugin/policy/validating.compositionEnvTemplateWithStrictCost
var templateWithStrictCost *plugincel.CompositionEnv

//go:linkname templateWithoutStrictCost k8s.io/apiserver/pkg/admission/plugin/policy/validating.compositionEnvTemplateWithoutStrictCost
var templateWithoutStrictCost *plugincel.CompositionEnv

// variablesTemplates returns the variables types every policy of the
// process shares: NewCompositedCompilerFromTemplate
// (pkg/admission/plugin/cel/composition.go:60-73) gives each policy's
// compiler the template's MapType itself, and AddField (composition.go:103)
// writes each compiled variable's type into it.
func variablesTemplates() []*apiservercel.DeclType {
	return []*apiservercel.DeclType{templateWithStrictCost.MapType, templateWithoutStrictCost.MapType}
}
