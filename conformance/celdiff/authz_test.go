package celdiff

import (
	"context"
	"fmt"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/celenv/authz"
)

// authzQuestion is what both authorizer interfaces are asked, reduced to the
// attributes a check can set.
type authzQuestion struct {
	user, verb, path, group, resource, subresource, namespace, name string
	resourceRequest                                                 bool
	fields, labels                                                  int
	fieldErr, labelErr                                              error
}

// decide is the test authorizer: its decision depends on the attributes and
// its reason echoes them, so that any difference in how a check reaches the
// authorizer shows in the result.
func decide(q authzQuestion) (decision int, reason string, err error) {
	reason = fmt.Sprintf("user=%s verb=%s path=%s gr=%s/%s/%s ns=%s name=%s fields=%d/%v labels=%d/%v",
		q.user, q.verb, q.path, q.group, q.resource, q.subresource, q.namespace, q.name, q.fields, q.fieldErr, q.labels, q.labelErr)
	switch {
	case q.resource == "broken":
		return 2, reason, fmt.Errorf("authorizer failed for %s", q.name)
	case q.resource == "secrets":
		return 0, reason, nil
	case !q.resourceRequest && q.path == "/healthz":
		return 1, reason, nil
	case strings.HasPrefix(q.user, "system:serviceaccount:") && q.verb == "list":
		return 1, reason, nil
	case q.resource == "widgets" || (q.resource == "pods" && q.verb == "get"):
		return 1, reason, nil
	}
	return 2, reason, nil
}

func upstreamAuthorizer() authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		q := authzQuestion{verb: a.GetVerb(), path: a.GetPath(), group: a.GetAPIGroup(), resource: a.GetResource(),
			subresource: a.GetSubresource(), namespace: a.GetNamespace(), name: a.GetName(), resourceRequest: a.IsResourceRequest()}
		if u := a.GetUser(); u != nil {
			q.user = u.GetName()
		}
		fs, ferr := a.GetFieldSelector()
		ls, lerr := a.GetLabelSelector()
		q.fields, q.fieldErr, q.labels, q.labelErr = len(fs), ferr, len(ls), lerr
		d, reason, err := decide(q)
		return authorizer.Decision(d), reason, err
	})
}

func vapkitAuthorizer() authz.Authorizer {
	return authz.AuthorizerFunc(func(_ context.Context, a authz.Attributes) (authz.Result, error) {
		q := authzQuestion{user: a.User.Username, verb: a.Verb, path: a.Path, group: a.APIGroup, resource: a.Resource,
			subresource: a.Subresource, namespace: a.Namespace, name: a.Name, resourceRequest: a.ResourceRequest,
			fields: len(a.FieldSelector), fieldErr: a.FieldSelectorErr, labels: len(a.LabelSelector), labelErr: a.LabelSelectorErr}
		d, reason, err := decide(q)
		return authz.Result{Decision: authz.Decision(d), Reason: reason}, err
	})
}

var authzCases = []string{
	`authorizer.group('').resource('pods').namespace('default').check('get').allowed()`,
	`authorizer.group('').resource('pods').namespace('default').name('p').check('get').reason()`,
	`authorizer.group('').resource('secrets').check('get').allowed()`,
	`authorizer.group('').resource('secrets').check('get').reason()`,
	`authorizer.group('').resource('secrets').check('get').errored()`,
	`authorizer.group('apps').resource('deployments').subresource('scale').check('update').allowed()`,
	`authorizer.group('x').resource('broken').name('b').check('get').errored()`,
	`authorizer.group('x').resource('broken').name('b').check('get').error()`,
	`authorizer.group('x').resource('broken').check('get').allowed()`,
	`authorizer.group('').resource('pods').check('get').error()`,
	`authorizer.path('/healthz').check('get').allowed()`,
	`authorizer.path('/metrics').check('get').reason()`,
	`authorizer.serviceAccount('kube-system', 'sa').group('').resource('pods').check('list').allowed()`,
	`authorizer.serviceAccount('kube-system', 'sa').group('').resource('pods').check('list').reason()`,
	`authorizer.requestResource.check('create').allowed()`,
	`authorizer.requestResource.check('create').reason()`,
	`authorizer.requestResource.subresource('status').check('update').reason()`,
	`authorizer.requestResource.namespace('other').name('n').check('delete').reason()`,
	`authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n1').check('list').reason()`,
	`authorizer.group('').resource('pods').labelSelector('app=web,tier in (a, b)').check('list').reason()`,
	`authorizer.group('').resource('pods').fieldSelector('a=b').labelSelector('x').check('list').reason()`,
	`authorizer.group('').resource('pods').fieldSelector('!!bad').check('list').reason()`,
	`authorizer.group('').resource('pods').labelSelector('a in (').check('list').reason()`,
	`authorizer.group('').resource('pods').fieldSelector('').check('list').reason()`,
	`['pods', 'secrets', 'configmaps'].all(r, authorizer.group('').resource(r).check('get').allowed())`,
	`['pods', 'secrets', 'configmaps'].map(r, authorizer.group('').resource(r).check('get').allowed())`,
	`authorizer.group('').resource('pods').check('get') == authorizer.group('').resource('pods').check('get')`,
	`authorizer.group('').resource('pods').check('')`,
}

func TestAuthorizerMatchesUpstream(t *testing.T) {
	obj := testObject()
	ctx := context.Background()
	for _, v := range differentialVersions {
		set := newUpstreamRunner(v)
		env := newVapkitRunner(t, v).env
		t.Run(v.String(), func(t *testing.T) {
			for _, expr := range authzCases {
				t.Run(expr, func(t *testing.T) {
					want := set.evalWith(expr, obj, true)
					scope := env.NewScope(celenv.ScopeOptions{})
					p := scope.Compile(expr, celenv.Decls{Authorizer: true})
					u := authenticationv1.UserInfo{Username: "alice"}
					authorizer, requestResource := celenv.AuthorizerValues(ctx, vapkitAuthorizer(), u, authz.RequestResource{
						Group: "example.com", Resource: "widgets", Namespace: "default", Name: "w"})
					in := &celenv.Input{Object: obj, Authorizer: authorizer, RequestResource: requestResource}
					res, err := scope.NewBatch(ctx, nil, in, runtimeBudget).Eval(p)
					got := outcome{Cost: res.Cost}
					switch {
					case err != nil:
						got = outcome{Err: "batch: " + err.Error()}
					case res.Err != nil:
						got.Err = res.Err.Error()
					default:
						got.Value = render(res.Value)
					}
					if got != want {
						t.Errorf("eval(%s) at %s\n  vapkit   = %v\n  upstream = %v", expr, v, got, want)
					}
				})
			}
		})
	}
}
