package gen

import (
	"fmt"
	"strings"
)

// path returns a CEL path into the request's object ("object" or
// "oldObject", sometimes the other one to exercise null handling).
func (g *generator) path(p string) string {
	root := g.objectRoot
	if g.chance(0.08) {
		root = map[string]string{"object": "oldObject", "oldObject": "object"}[root]
	}
	if strings.HasSuffix(p, ".size()") {
		return "size(" + root + "." + strings.TrimSuffix(p, ".size()") + ")"
	}
	return root + "." + p
}

func (g *generator) intPath() string {
	p := g.path(pick(g, g.kind.ints))
	if strings.HasSuffix(p, "data.count") {
		return "int(" + p + ")"
	}
	return p
}

func (g *generator) strPath() string { return g.path(pick(g, g.kind.strs)) }

func (g *generator) varOf(typ string) (string, bool) {
	var names []string
	for _, v := range g.variables {
		if v.typ == typ {
			names = append(names, "variables."+v.name)
		}
	}
	if len(names) == 0 {
		return "", false
	}
	return pick(g, names), true
}

// typedExpr returns an expression of the given CEL type (for variables).
func (g *generator) typedExpr(typ string) string {
	switch typ {
	case "int":
		return pick(g, []string{
			g.intPath() + " * 2",
			"size(" + g.strPath() + ")",
			"[1, 2, 3].sum()",
			"int(" + g.strPath() + ")",
		})
	case "string":
		return pick(g, []string{
			g.strPath() + ".upperAscii()",
			"request.userInfo.username",
			"'%s-%d'.format([" + g.strPath() + ", 1])",
			g.strPath() + ".replace('-', '_')",
		})
	}
	return g.boolExpr(true)
}

// boolExpr returns a boolean expression; withAuthz allows the authorizer.
func (g *generator) boolExpr(withAuthz bool) string {
	n, s := g.intPath, g.strPath
	k := fmt.Sprint(g.intn(6))
	templates := []func() string{
		func() string { return n() + " <= " + k },
		func() string { return n() + " % 2 == 0" },
		func() string { return s() + ".startsWith('web')" },
		func() string { return s() + ".matches('^[a-z0-9-]+$')" },
		func() string { return "size(" + s() + ") < 8" },
		func() string { return s() + ".contains('nginx')" },
		func() string { return "!format.dns1123Label().validate(" + s() + ").hasValue()" },
		func() string {
			return "has(" + g.objectRoot + ".metadata.labels) && " + g.objectRoot + ".metadata.labels['app'] == 'web'"
		},
		func() string { return "'app' in " + g.objectRoot + ".metadata.labels" },
		func() string { return g.objectRoot + ".?metadata.?labels[?'app'].orValue('none') != 'none'" },
		func() string { return g.objectRoot + ".metadata.?annotations.orValue({}).size() == 0" },
		func() string { return "has(" + g.objectRoot + ".status)" },
		func() string { return "oldObject == null || " + n() + " >= 1" },
		func() string {
			return "object != null && oldObject != null && object.metadata.name == oldObject.metadata.name"
		},
		func() string { return "request.operation == '" + pick(g, operations) + "'" },
		func() string { return "request.userInfo.username != 'bob'" },
		func() string { return "'admins' in request.userInfo.groups" },
		func() string { return "request.namespace.startsWith('team')" },
		func() string { return "request.subResource == '' && request.dryRun == false" },
		func() string { return "namespaceObject.metadata.labels['env'] == 'prod'" },
		func() string {
			return "namespaceObject == null || namespaceObject.?metadata.?labels[?'env'].orValue('') != 'dev'"
		},
		func() string {
			return "quantity('1Gi').isGreaterThan(quantity('" + pick(g, []string{"512Mi", "2Gi"}) + "'))"
		},
		func() string { return "isQuantity('" + pick(g, []string{"10x", "250m"}) + "')" },
		func() string { return "url('https://example.com:8443/x').getPort() == '8443'" },
		func() string {
			return "cidr('10.0.0.0/8').containsIP('" + pick(g, []string{"10.1.2.3", "192.168.0.1"}) + "')"
		},
		func() string { return "isIP('1.2.3') || ip('::1').isLoopback()" },
		func() string { return "[3, 1, 2].isSorted() || lists.range(5).sum() == 10" },
		func() string { return "'abc123'.find('[0-9]+') == '123'" },
		func() string { return "isSemver('1.2.3') && semver('1.2.3').isLessThan(semver('1.10.0'))" },
		func() string { return "'a,b,c'.split(',').size() == " + k },
		func() string { return "sets.contains([1, 2, 3], [" + k + "])" },
		func() string { return "{'a': 1, 'b': " + k + "}.all(k, v, v > 0)" },
		func() string { return "optional.ofNonZeroValue(" + s() + ").hasValue()" },
		func() string { return "[1, 2, 3].map(x, x * " + k + ").filter(x, x > 4).size() > 0" },
		// Runtime errors.
		func() string { return "1 / (" + n() + " - " + n() + ") == 0" },
		func() string { return "int('x" + k + "') == 1" },
		func() string { return g.objectRoot + ".spec.nonexistent == 1" },
		func() string { return "[1][" + k + "] == 1" },
		func() string { return "lists.range(1100000).size() > 0" },
		// Compile errors.
		func() string { return "1 + 'a' == 2" },
		func() string { return "undefinedThing == 1" },
		func() string { return "true" },
		func() string { return "false" },
	}
	if g.hasParamKind {
		field := "params.maxReplicas"
		prefix := "params.prefix"
		if g.paramKindName == "ConfigMap" {
			field, prefix = "int(params.data.max)", "params.data.prefix"
		}
		templates = append(templates,
			func() string { return n() + " <= " + field },
			func() string { return "params != null && " + n() + " <= " + field },
			func() string { return "params == null || " + s() + ".startsWith(" + prefix + ")" },
			func() string { return "has(params.metadata.labels) && params.metadata.labels['tier'] == 'gold'" },
		)
	}
	for _, typ := range []string{"int", "string", "bool"} {
		if v, ok := g.varOf(typ); ok {
			switch typ {
			case "int":
				templates = append(templates, func() string { return v + " > " + k })
			case "string":
				templates = append(templates, func() string { return v + ".size() > 3" })
			case "bool":
				templates = append(templates, func() string { return "!" + v })
			}
		}
	}
	if withAuthz {
		templates = append(templates,
			func() string {
				return "authorizer.group('apps').resource('deployments').namespace(request.namespace).check('update').allowed()"
			},
			func() string {
				return "authorizer.requestResource.check('" + pick(g, []string{"delete", "approve"}) + "').allowed()"
			},
			func() string { return "authorizer.path('/metrics').check('get').allowed()" },
			func() string {
				return "authorizer.serviceAccount('team-a', 'builder').resource('pods').check('create').reason() == 'on call'"
			},
			func() string { return "!authorizer.resource('secrets').check('get').errored()" },
		)
	}
	if g.chance(0.01) {
		// Exceeds the per-expression cost limit (about 80ms per evaluation).
		return "lists.range(600000).isSorted()"
	}
	expr := pick(g, templates)()
	if strings.Contains(expr, "authorizer.") {
		g.authorizerRulesNeeded = true
	}
	if g.chance(0.15) {
		expr = "(" + expr + ") " + pick(g, []string{"&&", "||"}) + " (" + pick(g, templates)() + ")"
	}
	return expr
}

func (g *generator) messageExpr() string {
	templates := []string{
		"'replicas: ' + string(" + g.intPath() + ")",
		g.strPath() + " + ' rejected'",
		"'line1\\nline2'",
		"''",
		"'   '",
		"'bad: ' + string(1 / 0)",
		g.intPath(),
		"request.userInfo.username + ' may not ' + request.operation",
	}
	if g.hasParamKind {
		templates = append(templates, "'limit ' + string(params.maxReplicas)", "'limit from ' + params.metadata.name")
	}
	return pick(g, templates)
}

func (g *generator) auditExpr() string {
	templates := []string{
		"'op-' + request.operation",
		"null",
		g.strPath(),
		"string(" + g.intPath() + ")",
		"request.userInfo.username",
		"1",
		"request.namespace == '' ? null : request.namespace",
	}
	if g.hasParamKind {
		templates = append(templates, "params.metadata.name", "string(params.maxReplicas)")
	}
	return pick(g, templates)
}
