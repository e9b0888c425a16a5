package reviewcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/casefile"
	"github.com/vapkit/vapkit/policy/manifest"
)

// Exit statuses of the vapkit command.
const (
	ExitOK     = 0 // every test passed
	ExitFailed = 1 // a test failed or errored
	ExitUsage  = 2 // bad usage or input
)

const testUsage = `usage: vapkit test [flags] PATH...

Runs the suites and case files under each PATH (files or directories,
searched recursively) and checks them against their expectations.

flags:
  -format text|json|junit      report format (default text: like go test)
  -run REGEXP                  run only the tests and cases whose name matches
  -v                           list every test with the decision it got
  -kubernetes-version 1.NN     API server (binary) version to evaluate as, 1.30 to 1.37 (default 1.37);
                               new expressions are checked as its compatibility version, one minor lower
  -stored                      evaluate case files whose objects the API server would refuse to create,
                               as if already stored

Exit status: 0 all passed, 1 a test failed or errored, 2 bad usage or input.
`

const evalUsage = `usage: vapkit eval [-kubernetes-version 1.NN] CASE.yaml

Prints the AdmissionReview response the API server would give for the one
request of a case file, with the case's objects stored; what it would have
refused to create is listed on stderr.
`

// Test is vapkit test: it runs suites and case files and returns the exit
// status.
func Test(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, help, err := parseArgs(args)
	if help {
		_, _ = io.WriteString(stdout, testUsage)
		return ExitOK
	}
	if err == nil {
		cfg.testMode, cfg.quiet = true, true
		err = execute(ctx, cfg, stdout, stderr)
	}
	return vapkitExit(stderr, "test", err)
}

// Eval is vapkit eval: it prints the response for one case file.
func Eval(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, help, err := parseArgs(args)
	if help {
		_, _ = io.WriteString(stdout, evalUsage)
		return ExitOK
	}
	if err == nil && (cfg.testMode || len(cfg.paths) != 1) {
		err = usagef("eval takes one case file and only -kubernetes-version")
	}
	if err == nil {
		var env *celenv.Env
		if env, err = celenv.New(celenv.Options{Version: cfg.version}); err == nil {
			err = reviewOne(ctx, cfg.paths[0], casefile.Options{Env: env}, stdout, stderr)
		}
	}
	return vapkitExit(stderr, "eval", err)
}

// vapkitExit reports err and maps it to an exit status: failed tests are
// 1, everything else (usage, unreadable or broken input) 2.
func vapkitExit(stderr io.Writer, cmd string, err error) int {
	if err == nil {
		return ExitOK
	}
	var fe *failedError
	if errors.As(err, &fe) {
		fmt.Fprintf(stderr, "vapkit %s: %v\n", cmd, err)
		return ExitFailed
	}
	msg := strings.ReplaceAll(err.Error(), "(usage: review [flags] CASE.yaml, or review [flags] PATH...; -h lists the flags)", "(vapkit "+cmd+" -h lists the flags)")
	fmt.Fprintf(stderr, "vapkit %s: %s\n", cmd, msg)
	return ExitUsage
}

// Init is vapkit init: it writes a suite skeleton for the policies of a
// file, with one allow and one deny test per policy to fill in.
func Init(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		_, _ = io.WriteString(stdout, initUsage)
		return ExitOK
	}
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		fmt.Fprint(stderr, "vapkit init: want one policy file\n"+initUsage)
		return ExitUsage
	}
	data, err := os.ReadFile(args[0])
	if err == nil {
		var text string
		if text, err = suiteSkeleton(args[0], data); err == nil {
			_, err = io.WriteString(stdout, text)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "vapkit init: %v\n", err)
		return ExitUsage
	}
	return ExitOK
}

const initUsage = `usage: vapkit init POLICY.yaml > POLICY.suite.yaml

Writes a suite for the ValidatingAdmissionPolicies of POLICY.yaml (with
their bindings, params and CRDs in the same file) with one allow and one
deny test per policy, to fill in; save it next to the policy file.
`

// suiteSkeleton writes the suite text for the policy file named file.
func suiteSkeleton(file string, data []byte) (string, error) {
	m, err := manifest.Load(data, file)
	if err != nil {
		return "", err
	}
	if len(m.Policies) == 0 {
		return "", fmt.Errorf("%s: no ValidatingAdmissionPolicy", file)
	}
	mapper, err := manifest.NewResourceMapper(m.CRDs...)
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	bound := map[string]bool{}
	for _, b := range m.Bindings {
		bound[b.Spec.PolicyName] = true
	}
	base := filepath.Base(file)
	name := strings.TrimSuffix(base, filepath.Ext(base))
	var b strings.Builder
	fmt.Fprintf(&b, "# Tests of the policies of %s: fill in the objects and the expected\n", base)
	fmt.Fprintf(&b, "# messages, save next to %s and run: vapkit test THIS-FILE\n", base)
	b.WriteString("# Format: https://github.com/vapkit/vapkit/blob/main/examples/review/FORMAT.md\n")
	fmt.Fprintf(&b, "apiVersion: vapkit.dev/v1alpha1\nkind: Suite\nmetadata: {name: %s}\n", yamlString(name))
	fmt.Fprintf(&b, "policies: [%s]   # and its bindings, params, namespaces, CRDs\n", yamlString(base))
	b.WriteString("tests:\n")
	for _, p := range m.Policies {
		gvk, namespaced := skeletonKind(p, mapper)
		if !bound[p.Name] {
			fmt.Fprintf(&b, "# %s has no binding in %s: add one, or no test can reach it.\n", p.Name, base)
		}
		for _, tc := range []struct{ verb, objName, todo, expect string }{
			{"allows", "allowed", "the fields the policy checks, with values it accepts", "  expect: {allow: true}\n"},
			{"denies", "denied", "a value the policy rejects", "  expect:\n    deny:\n      message: {contains: " + yamlString(denyMessage(p)) + "}\n"},
		} {
			fmt.Fprintf(&b, "- name: %s\n", yamlString(fmt.Sprintf("%s %s a %s", p.Name, tc.verb, gvk.Kind)))
			b.WriteString("  object:\n")
			fmt.Fprintf(&b, "    apiVersion: %s\n    kind: %s\n", yamlString(gvk.GroupVersion().String()), yamlString(gvk.Kind))
			if namespaced {
				fmt.Fprintf(&b, "    metadata: {name: %s, namespace: default}\n", tc.objName)
			} else {
				fmt.Fprintf(&b, "    metadata: {name: %s}\n", tc.objName)
			}
			fmt.Fprintf(&b, "    # TODO: %s\n", tc.todo)
			b.WriteString(tc.expect)
		}
	}
	return b.String(), nil
}

// skeletonKind picks the kind of the first resource rule of p that names a
// known resource, or a ConfigMap placeholder.
func skeletonKind(p *admissionregistrationv1.ValidatingAdmissionPolicy, mapper policy.ResourceMapper) (schema.GroupVersionKind, bool) {
	if mc := p.Spec.MatchConstraints; mc != nil {
		for _, r := range mc.ResourceRules {
			for _, g := range r.APIGroups {
				for _, v := range r.APIVersions {
					for _, res := range r.Resources {
						if g == "*" || v == "*" || strings.ContainsAny(res, "*/") {
							continue
						}
						gvk := mapper.KindFor(schema.GroupVersionResource{Group: g, Version: v, Resource: res}, "")
						if gvk.Empty() {
							continue
						}
						_, namespaced, err := mapper.ResourceFor(gvk)
						if err == nil {
							return gvk, namespaced
						}
					}
				}
			}
		}
	}
	return schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, true
}

// denyMessage is the message the first validation of p denies with, as far
// as it is known without evaluating.
func denyMessage(p *admissionregistrationv1.ValidatingAdmissionPolicy) string {
	if len(p.Spec.Validations) == 0 {
		return "TODO: the expected message"
	}
	v := p.Spec.Validations[0]
	switch {
	case v.MessageExpression != "":
		return "TODO: the text of messageExpression " + v.MessageExpression
	case v.Message != "":
		return v.Message
	}
	return "failed expression: " + strings.TrimSpace(v.Expression)
}

// yamlString quotes s for a YAML flow context.
func yamlString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return `""`
	}
	return strings.TrimSuffix(b.String(), "\n")
}
