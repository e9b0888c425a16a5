package defaulting

import (
	"crypto/x509"
	"encoding/pem"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Pod certificate requests cap their lifetime at a day by default. A
// certificates/v1beta1 CertificateSigningRequest defaults its usages and
// picks its signer from the request itself: a kubelet's client or serving
// certificate request goes to the matching kubelet signer, anything else
// to the legacy unknown signer.

func registerCertificatesV1(s *runtime.Scheme) {
	add(s, func(r *certificatesv1.PodCertificateRequest) {
		if r.Spec.MaxExpirationSeconds == nil {
			r.Spec.MaxExpirationSeconds = new(int32(86400))
		}
	}, func(l *certificatesv1.PodCertificateRequestList) []certificatesv1.PodCertificateRequest {
		return l.Items
	})

}

func registerCertificatesV1beta1(s *runtime.Scheme) {
	add(s,

		defaultCSRV1beta1, func(l *certificatesv1beta1.CertificateSigningRequestList) []certificatesv1beta1.CertificateSigningRequest {
			return l.Items
		})

	add(s, func(r *certificatesv1beta1.PodCertificateRequest) {
		if r.Spec.MaxExpirationSeconds == nil {
			r.Spec.MaxExpirationSeconds = new(int32(86400))
		}
	}, func(l *certificatesv1beta1.PodCertificateRequestList) []certificatesv1beta1.PodCertificateRequest {
		return l.Items
	})

}

func defaultCSRV1beta1(r *certificatesv1beta1.CertificateSigningRequest) {
	if r.Spec.Usages == nil {
		r.Spec.Usages = []certificatesv1beta1.KeyUsage{certificatesv1beta1.UsageDigitalSignature, certificatesv1beta1.UsageKeyEncipherment}
	}
	if r.Spec.SignerName == nil {
		r.Spec.SignerName = new(signerFor(r.Spec.Request, r.Spec.Usages))
	}
	for i := range r.Status.Conditions {
		if c := &r.Status.Conditions[i]; c.Status == "" {
			c.Status = corev1.ConditionTrue
		}
	}
}

// signerFor names the signer of a v1beta1 request without one.
func signerFor(request []byte, usages []certificatesv1beta1.KeyUsage) string {
	block, _ := pem.Decode(request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return certificatesv1beta1.LegacyUnknownSignerName
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	switch {
	case err != nil:
		return certificatesv1beta1.LegacyUnknownSignerName
	case kubeletClientRequest(csr, usages):
		return certificatesv1beta1.KubeAPIServerClientKubeletSignerName
	case kubeletServingRequest(csr, usages):
		return certificatesv1beta1.KubeletServingSignerName
	}
	return certificatesv1beta1.LegacyUnknownSignerName
}

// fromNode reports whether the request's subject is a node: organization
// exactly system:nodes, common name system:node:NAME.
func fromNode(csr *x509.CertificateRequest) bool {
	org := csr.Subject.Organization
	return len(org) == 1 && org[0] == "system:nodes" && strings.HasPrefix(csr.Subject.CommonName, "system:node:")
}

// usagesAre reports whether usages, as a set, equal want with or without
// key encipherment (which only RSA keys need).
func usagesAre(usages []certificatesv1beta1.KeyUsage, want ...certificatesv1beta1.KeyUsage) bool {
	set := map[certificatesv1beta1.KeyUsage]bool{}
	for _, u := range usages {
		set[u] = true
	}
	delete(set, certificatesv1beta1.UsageKeyEncipherment)
	if len(set) != len(want) {
		return false
	}
	for _, w := range want {
		if !set[w] {
			return false
		}
	}
	return true
}

func kubeletClientRequest(csr *x509.CertificateRequest, usages []certificatesv1beta1.KeyUsage) bool {
	return fromNode(csr) && len(csr.DNSNames) == 0 && len(csr.EmailAddresses) == 0 &&
		len(csr.IPAddresses) == 0 && len(csr.URIs) == 0 &&
		usagesAre(usages, certificatesv1beta1.UsageDigitalSignature, certificatesv1beta1.UsageClientAuth)
}

func kubeletServingRequest(csr *x509.CertificateRequest, usages []certificatesv1beta1.KeyUsage) bool {
	return fromNode(csr) && (len(csr.DNSNames) > 0 || len(csr.IPAddresses) > 0) &&
		len(csr.EmailAddresses) == 0 && len(csr.URIs) == 0 &&
		usagesAre(usages, certificatesv1beta1.UsageDigitalSignature, certificatesv1beta1.UsageServerAuth)
}
