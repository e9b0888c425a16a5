package defaulting

import (
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A token request asks for an hour unless it says otherwise.
func registerAuthenticationV1(s *runtime.Scheme) {
	addKind(s, func(r *authenticationv1.TokenRequest) {
		if r.Spec.ExpirationSeconds == nil {
			r.Spec.ExpirationSeconds = new(int64(60 * 60))
		}
	})

}
