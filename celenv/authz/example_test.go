package authz_test

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/vapkit/vapkit/celenv/authz"
)

// ExampleNewCaching answers a repeated check from memory: the user's
// groups are compared as a set, so the second check, with the groups in
// another order, does not reach the authorizer.
func ExampleNewCaching() {
	calls := 0
	admins := authz.AuthorizerFunc(func(_ context.Context, a authz.Attributes) (authz.Result, error) {
		calls++
		for _, g := range a.User.Groups {
			if g == "admins" {
				return authz.Result{Decision: authz.Allow, Reason: "admins may"}, nil
			}
		}
		return authz.Result{Decision: authz.NoOpinion}, nil
	})
	cached := authz.NewCaching(admins)
	for _, groups := range [][]string{{"admins", "devs"}, {"devs", "admins"}} {
		res, err := cached.Authorize(context.Background(), authz.Attributes{
			User:            authenticationv1.UserInfo{Username: "ann", Groups: groups},
			Verb:            "delete",
			ResourceRequest: true,
			APIGroup:        "apps", APIVersion: "*", Resource: "deployments", Namespace: "prod",
		})
		fmt.Println(res.Decision, res.Reason, err)
	}
	fmt.Println("calls:", calls)
	// Output:
	// Allow admins may <nil>
	// Allow admins may <nil>
	// calls: 1
}
