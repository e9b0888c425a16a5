package typecheck_test

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/typecheck"
)

// TestDriftParamsWithoutSchema: up to 1.35 the type checker declared
// params only when the paramKind's schema resolved; from 1.36 whenever the
// policy has a paramKind (dyn without a schema).
func TestDriftParamsWithoutSchema(t *testing.T) {
	p := vap(expr("params.anything == 'x'"), func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "example.com/v1", Kind: "Config"}
	})
	withSchema := vap(expr("params.data.x == 'y'"), func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	})
	for _, v := range []celenv.Version{celenv.Version1_30, celenv.Version1_35, celenv.Version1_36, celenv.Version1_37} {
		env, err := celenv.New(celenv.Options{Version: v})
		if err != nil {
			t.Fatalf("celenv.New(%v) = %v", v, err)
		}
		c, err := typecheck.NewChecker(typecheck.Options{Env: env})
		if err != nil {
			t.Fatalf("NewChecker(%v) = %v", v, err)
		}
		got := c.Check(p).Warnings
		if v < celenv.Version1_36 {
			want := "apps/v1, Kind=Deployment: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')"
			if len(got) != 1 || !strings.HasPrefix(got[0].Warning, want) {
				t.Errorf("%v: Check() = %v, want a warning starting %q", v, got, want)
			}
		} else if got != nil {
			t.Errorf("%v: Check() = %v, want none", v, got)
		}
		if got := c.Check(withSchema).Warnings; got != nil {
			t.Errorf("%v: Check() with a resolvable paramKind = %v, want none", v, got)
		}
	}
}
