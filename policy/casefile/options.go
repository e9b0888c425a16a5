package casefile

import (
	"context"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/policy"
)

// Options adjust how [Case.CompileWith] and [Case.ReviewWith] build the
// evaluator of a case. The zero value gives the defaults of [policy.Options].
type Options struct {
	// Env is the CEL environment, which chooses the Kubernetes version the
	// case is evaluated as; nil means Kubernetes 1.37.
	Env *celenv.Env
	// TraceUnmatched sets policy.Options.TraceUnmatched.
	TraceUnmatched bool
	// MeasureCost sets policy.Options.MeasureCost.
	MeasureCost bool
}

// apply copies the set fields of o into p.
func (o Options) apply(p *policy.Options) {
	p.TraceUnmatched = o.TraceUnmatched
	p.MeasureCost = o.MeasureCost
	if o.Env != nil {
		p.Env = o.Env
	}
}

// ReviewWith evaluates the case with o and returns the response vapkit
// gives.
func (c *Case) ReviewWith(ctx context.Context, o Options) (*admissionv1.AdmissionResponse, error) {
	ev, req, err := c.CompileWith(o)
	if err != nil {
		return nil, err
	}
	d, err := ev.Evaluate(ctx, req)
	if err != nil {
		return nil, err
	}
	return d.AdmissionResponse(c.AdmissionReview.Request.UID), nil
}
