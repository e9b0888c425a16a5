package kubedefaults

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"

	appsv1 "k8s.io/api/apps/v1"
	appsv1beta1 "k8s.io/api/apps/v1beta1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1alpha1 "k8s.io/api/rbac/v1alpha1"
	"k8s.io/apimachinery/pkg/api/resource"
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
	labels := map[string]string{"app": "web"}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "web", Image: "nginx:1.27",
			Ports:     []corev1.ContainerPort{{ContainerPort: 80}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.0005")}},
		}}},
	}
	return []runtime.Object{
		// The workloads as they are usually written: a template and a
		// selector, nothing else.
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
			Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
		},
		&appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
			Spec: appsv1.StatefulSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template, ServiceName: "db",
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
					ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1.0001Ki")}},
					},
				}},
			},
		},
		&appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "kube-system"},
			Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
		},
		// apps/v1beta1 and extensions/v1beta1 take selector and labels
		// from the template; extensions defaults rolling parameters even
		// of a Recreate deployment that has them.
		&appsv1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: appsv1beta1.StatefulSetSpec{Template: template}},
		&extensionsv1beta1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: extensionsv1beta1.DeploymentSpec{Template: template, Strategy: extensionsv1beta1.DeploymentStrategy{
				Type: extensionsv1beta1.RecreateDeploymentStrategyType, RollingUpdate: &extensionsv1beta1.RollingUpdateDeployment{},
			}},
		},
		// A job with a per-index backoff limit and a pod failure policy,
		// and a cron job whose job template is not defaulted as a job.
		&batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "batch"},
			Spec: batchv1.JobSpec{
				Template: template, BackoffLimitPerIndex: new(int32(2)), CompletionMode: new(batchv1.IndexedCompletion), Completions: new(int32(4)),
				PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
					Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}},
				}}},
			},
		},
		&batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
			Spec:       batchv1.CronJobSpec{Schedule: "0 3 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template}}},
		},
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
