package matching

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// namespacesResource is core/v1 namespaces, the one cluster-scoped resource
// whose requests carry a namespace (the namespace's own name).
var namespacesResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// matchRules applies excludeResourceRules and then resourceRules, as the
// rule part of the API server's Matcher.Matches. An exclude match or error
// ends the evaluation; empty resourceRules select every request as
// requested.
func matchRules(mr *admissionregistrationv1.MatchResources, a *Attributes, m runtime.EquivalentResourceMapper) (Result, error) {
	excluded, err := matchNamedRules(mr.ExcludeResourceRules, mr.MatchPolicy, a, m)
	if err != nil {
		return Result{}, err
	}
	if excluded.Matched {
		return Result{}, nil
	}
	if len(mr.ResourceRules) == 0 {
		return Result{Matched: true, Resource: a.Resource, Kind: a.Kind}, nil
	}
	return matchNamedRules(mr.ResourceRules, mr.MatchPolicy, a, m)
}

// matchNamedRules finds the first rule matching the request as issued and,
// failing that and unless the policy is nil or Exact, the first (rule,
// equivalent resource) pair in rule-major order, as the API server's
// matchesResourceRules.
func matchNamedRules(rules []admissionregistrationv1.NamedRuleWithOperations, policy *admissionregistrationv1.MatchPolicyType, a *Attributes, m runtime.EquivalentResourceMapper) (Result, error) {
	for i := range rules {
		r := &rules[i]
		if ruleMatches(&r.RuleWithOperations, a, a.Resource) && nameMatches(r.ResourceNames, a.Name) {
			return Result{Matched: true, Resource: a.Resource, Kind: a.Kind}, nil
		}
	}

	// Only nil and Exact skip the second pass; any other value, including
	// an unknown one, is treated as Equivalent, as upstream does.
	if policy == nil || *policy == admissionregistrationv1.Exact || m == nil || len(rules) == 0 {
		return Result{}, nil
	}
	equivalents := m.EquivalentResourcesFor(a.Resource, a.SubResource)
	for i := range rules {
		r := &rules[i]
		for _, eq := range equivalents {
			if eq == a.Resource {
				continue // already tried in the first pass
			}
			if !ruleMatches(&r.RuleWithOperations, a, eq) {
				continue
			}
			// The kind is resolved before the name check, so an unknown
			// kind is an error even when the name would not match.
			kind := m.KindFor(eq, a.SubResource)
			if kind.Empty() {
				return Result{}, fmt.Errorf("unable to convert to %v: unknown kind", eq)
			}
			if nameMatches(r.ResourceNames, a.Name) {
				return Result{Matched: true, Resource: eq, Kind: kind}, nil
			}
		}
	}
	return Result{}, nil
}

// nameMatches reports whether a rule's resourceNames admit name: an empty
// list admits every name, including "".
func nameMatches(names []string, name string) bool {
	return len(names) == 0 || slices.Contains(names, name)
}

// ruleMatches reports whether r matches the request a when a's resource is
// taken to be res (the requested resource or an equivalent one). Operation,
// subresource and namespace always come from the request.
func ruleMatches(r *admissionregistrationv1.RuleWithOperations, a *Attributes, res schema.GroupVersionResource) bool {
	return scopeMatches(r.Scope, a.Namespace, res) &&
		operationMatches(r.Operations, a.Operation) &&
		exactOrWildcard(r.APIGroups, res.Group) &&
		exactOrWildcard(r.APIVersions, res.Version) &&
		resourceMatches(r.Resources, res.Resource, a.SubResource)
}

// scopeMatches implements rule.scope: nil and "*" match everything;
// Namespaced matches requests with a namespace other than those for
// core/v1 namespaces; Cluster matches the rest; other values match nothing.
func scopeMatches(scope *admissionregistrationv1.ScopeType, namespace string, res schema.GroupVersionResource) bool {
	if scope == nil {
		return true
	}
	switch *scope {
	case admissionregistrationv1.AllScopes:
		return true
	case admissionregistrationv1.NamespacedScope:
		return res != namespacesResource && namespace != ""
	case admissionregistrationv1.ClusterScope:
		return res == namespacesResource || namespace == ""
	default:
		return false
	}
}

// operationMatches reports whether ops contains "*" or op.
func operationMatches(ops []admissionregistrationv1.OperationType, op string) bool {
	for _, o := range ops {
		if o == admissionregistrationv1.OperationAll || string(o) == op {
			return true
		}
	}
	return false
}

// exactOrWildcard reports whether items contains "*" or s.
func exactOrWildcard(items []string, s string) bool {
	for _, item := range items {
		if item == "*" || item == s {
			return true
		}
	}
	return false
}

// resourceMatches reports whether one of the rule's resources entries,
// "resource" or "resource/subresource" with "*" allowed in either part,
// matches the request. An entry without "/" names the main resource only,
// so "*" does not match subresources while "pods/*" matches pods and all of
// its subresources.
func resourceMatches(entries []string, resource, sub string) bool {
	for _, e := range entries {
		r, s := splitResource(e)
		if (r == "*" || r == resource) && (s == "*" || s == sub) {
			return true
		}
	}
	return false
}

// splitResource splits a rules resources entry at its first "/".
func splitResource(e string) (resource, sub string) {
	resource, sub, _ = strings.Cut(e, "/")
	return resource, sub
}
