package kubedefaults

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1alpha1 "k8s.io/api/rbac/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// typicalGroupObjects are hand-written objects of the non-core groups'
// kinds, compared beside the generated ones: each reaches a branch that
// generated objects seldom reach.
func typicalGroupObjects() []runtime.Object {
	node := pkix.Name{Organization: []string{"system:nodes"}, CommonName: "system:node:worker-1"}
	csr := func(usages []certificatesv1beta1.KeyUsage, request []byte) *certificatesv1beta1.CertificateSigningRequest {
		return &certificatesv1beta1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "csr"},
			Spec:       certificatesv1beta1.CertificateSigningRequestSpec{Request: request, Usages: usages},
			Status: certificatesv1beta1.CertificateSigningRequestStatus{Conditions: []certificatesv1beta1.CertificateSigningRequestCondition{
				{Type: certificatesv1beta1.CertificateApproved},
			}},
		}
	}
	client, serving := certificateRequest(node, nil), certificateRequest(node, []string{"worker-1.example"})
	return []runtime.Object{
		// The kubelet's client certificate request, with and without key
		// encipherment, then one with the default usages (not a
		// kubelet's), a serving request, and one that is no PEM.
		csr([]certificatesv1beta1.KeyUsage{"digital signature", "key encipherment", "client auth"}, client),
		csr([]certificatesv1beta1.KeyUsage{"client auth", "digital signature"}, client),
		csr(nil, client),
		csr([]certificatesv1beta1.KeyUsage{"digital signature", "server auth"}, serving),
		csr([]certificatesv1beta1.KeyUsage{"digital signature", "server auth"}, client),
		csr(nil, []byte("not a certificate request")),
		csr([]certificatesv1beta1.KeyUsage{"digital signature", "client auth"}, certificateRequest(pkix.Name{Organization: []string{"system:nodes", "extra"}, CommonName: "system:node:worker-1"}, nil)),
		// A priority level that keeps zero shares, and one that does not.
		&flowcontrolv1beta3.PriorityLevelConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "keep", Annotations: map[string]string{flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey: ""}},
			Spec: flowcontrolv1beta3.PriorityLevelConfigurationSpec{Type: flowcontrolv1beta3.PriorityLevelEnablementLimited, Limited: &flowcontrolv1beta3.LimitedPriorityLevelConfiguration{
				LimitResponse: flowcontrolv1beta3.LimitResponse{Type: flowcontrolv1beta3.LimitResponseTypeQueue, Queuing: &flowcontrolv1beta3.QueuingConfiguration{}},
			}},
		},
		&flowcontrolv1.PriorityLevelConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "zero", Annotations: map[string]string{flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey: ""}},
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: new(int32(0)),
			}},
		},
		// An autoscaler that only slows scaling down.
		&autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
				MaxReplicas:    10,
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{
					StabilizationWindowSeconds: new(int32(300)),
				}},
			},
		},
		// Bindings with a subject of every kind.
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "rb", Namespace: "default"},
			RoleRef:    rbacv1.RoleRef{Kind: "Role", Name: "reader"},
			Subjects: []rbacv1.Subject{
				{Kind: "ServiceAccount", Name: "default", Namespace: "default"},
				{Kind: "User", Name: "alice"}, {Kind: "Group", Name: "devs"}, {Kind: "Robot", Name: "r2"},
			},
		},
		&rbacv1alpha1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "crb"},
			RoleRef:    rbacv1alpha1.RoleRef{Kind: "ClusterRole", Name: "admin"},
			Subjects: []rbacv1alpha1.Subject{
				{Kind: "ServiceAccount", Name: "default", Namespace: "default"}, {Kind: "User", Name: "alice"},
			},
		},
		// An egress-only network policy with a port of no protocol.
		&networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "np", Namespace: "default"},
			Spec: networkingv1.NetworkPolicySpec{Egress: []networkingv1.NetworkPolicyEgressRule{{
				Ports: []networkingv1.NetworkPolicyPort{{}},
			}}},
		},
	}
}

// certificateRequest is a PEM certificate signing request for subject,
// with DNS names.
func certificateRequest(subject pkix.Name, dns []string) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject, DNSNames: dns}, key)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}
