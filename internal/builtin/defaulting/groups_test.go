package defaulting

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	arv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	appsv1beta1 "k8s.io/api/apps/v1beta1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1alpha1 "k8s.io/api/rbac/v1alpha1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// templateDefaults is what the core group's defaulting makes of an empty
// pod template.
func templateDefaults(labels map[string]string) corev1.PodTemplateSpec {
	t := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}}
	defaultPodTemplateSpec(&t)
	return t
}

// TestRegisterDefaultsGroupKinds defaults one object of a kind of each
// non-core group, reaching the branches that set these groups apart; the
// values are kube-apiserver 1.37's (conformance/kubedefaults compares them
// with kube's functions on generated objects).
func TestRegisterDefaultsGroupKinds(t *testing.T) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		arv1beta1.AddToScheme, appsv1.AddToScheme, appsv1beta1.AddToScheme, autoscalingv2.AddToScheme,
		batchv1.AddToScheme, certificatesv1beta1.AddToScheme, extensionsv1beta1.AddToScheme,
		flowcontrolv1beta3.AddToScheme, networkingv1.AddToScheme, rbacv1alpha1.AddToScheme,
		resourcev1.AddToScheme, storagev1.AddToScheme,
	} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	Register(s)
	stamp := time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC)
	defer func(old func() time.Time) { now = old }(now)
	now = func() time.Time { return stamp.Add(300 * time.Millisecond) }

	labels := map[string]string{"app": "web"}
	quarter := intstr.FromString("25%")
	tests := []struct {
		name      string
		obj, want runtime.Object
	}{{
		name: "apps/v1 deployment",
		obj:  &appsv1.Deployment{},
		want: &appsv1.Deployment{Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(1)),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxUnavailable: &quarter, MaxSurge: &quarter,
			}},
			RevisionHistoryLimit: new(int32(10)), ProgressDeadlineSeconds: new(int32(600)),
			Template: templateDefaults(nil),
		}},
	}, {
		name: "apps/v1 stateful set updated on delete gets no rolling update",
		obj:  &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}}},
		want: &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{
			Replicas: new(int32(1)), PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy:       appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			RevisionHistoryLimit: new(int32(10)),
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
			Template: templateDefaults(nil),
		}},
	}, {
		name: "apps/v1 rolling stateful set takes one pod down at a time",
		obj:  &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: new(int32(3)), PodManagementPolicy: appsv1.ParallelPodManagement}},
		want: &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{
			Replicas: new(int32(3)), PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{
				Partition: new(int32(0)), MaxUnavailable: new(intstr.FromInt32(1)),
			}},
			RevisionHistoryLimit: new(int32(10)),
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
			Template: templateDefaults(nil),
		}},
	}, {
		name: "apps/v1beta1 stateful set takes selector and labels from its template",
		obj:  &appsv1beta1.StatefulSet{Spec: appsv1beta1.StatefulSetSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}}}},
		want: &appsv1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: appsv1beta1.StatefulSetSpec{
			Replicas: new(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			PodManagementPolicy:  appsv1beta1.OrderedReadyPodManagement,
			UpdateStrategy:       appsv1beta1.StatefulSetUpdateStrategy{Type: appsv1beta1.OnDeleteStatefulSetStrategyType},
			RevisionHistoryLimit: new(int32(10)),
			PersistentVolumeClaimRetentionPolicy: &appsv1beta1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1beta1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1beta1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
			Template: templateDefaults(labels),
		}},
	}, {
		name: "batch/v1 job with a backoff limit per index and a parallelism",
		obj:  &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: new(int32(3)), BackoffLimitPerIndex: new(int32(1)), Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}}}},
		want: &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: batchv1.JobSpec{
			Parallelism: new(int32(3)), BackoffLimitPerIndex: new(int32(1)), BackoffLimit: new(int32(math.MaxInt32)),
			CompletionMode: new(batchv1.NonIndexedCompletion), Suspend: new(false), ManualSelector: new(false),
			PodReplacementPolicy: new(batchv1.TerminatingOrFailed),
			Template:             templateDefaults(labels),
		}},
	}, {
		name: "batch/v1 cron job's job template is not defaulted as a job",
		obj: &batchv1.CronJob{Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}}}}},
		}}}},
		want: &batchv1.CronJob{Spec: batchv1.CronJobSpec{
			ConcurrencyPolicy: batchv1.AllowConcurrent, Suspend: new(false),
			SuccessfulJobsHistoryLimit: new(int32(3)), FailedJobsHistoryLimit: new(int32(1)),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{
					Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				}}}}},
				Template: templateDefaults(nil),
			}},
		}},
	}, {
		name: "extensions/v1beta1 network policy ports keep no protocol",
		obj:  &extensionsv1beta1.NetworkPolicy{Spec: extensionsv1beta1.NetworkPolicySpec{Ingress: []extensionsv1beta1.NetworkPolicyIngressRule{{Ports: []extensionsv1beta1.NetworkPolicyPort{{}}}}}},
		want: &extensionsv1beta1.NetworkPolicy{Spec: extensionsv1beta1.NetworkPolicySpec{
			Ingress:     []extensionsv1beta1.NetworkPolicyIngressRule{{Ports: []extensionsv1beta1.NetworkPolicyPort{{}}}},
			PolicyTypes: []extensionsv1beta1.PolicyType{extensionsv1beta1.PolicyTypeIngress},
		}},
	}, {
		name: "networking/v1 egress network policy",
		obj:  &networkingv1.NetworkPolicy{Spec: networkingv1.NetworkPolicySpec{Egress: []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{}}}}}},
		want: &networkingv1.NetworkPolicy{Spec: networkingv1.NetworkPolicySpec{
			Egress:      []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{Protocol: new(corev1.ProtocolTCP)}}}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		}},
	}, {
		name: "autoscaling/v2 behavior with scale-down stabilization only",
		obj: &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: new(int32(60))},
		}}},
		want: &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			MinReplicas: new(int32(1)),
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: new(int32(80))},
			}}},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleUp: &autoscalingv2.HPAScalingRules{
					StabilizationWindowSeconds: new(int32(0)), SelectPolicy: new(autoscalingv2.MaxChangePolicySelect),
					Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15}, {Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}},
				},
				ScaleDown: &autoscalingv2.HPAScalingRules{
					StabilizationWindowSeconds: new(int32(60)), SelectPolicy: new(autoscalingv2.MaxChangePolicySelect),
					Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}},
				},
			},
		}},
	}, {
		name: "rbac/v1alpha1 subjects get API versions",
		obj: &rbacv1alpha1.RoleBinding{Subjects: []rbacv1alpha1.Subject{
			{Kind: "ServiceAccount", Name: "sa"}, {Kind: "User", Name: "alice"}, {Kind: "Robot", Name: "r2"},
		}},
		want: &rbacv1alpha1.RoleBinding{
			RoleRef: rbacv1alpha1.RoleRef{APIGroup: "rbac.authorization.k8s.io"},
			Subjects: []rbacv1alpha1.Subject{
				{Kind: "ServiceAccount", Name: "sa", APIVersion: "v1"},
				{Kind: "User", Name: "alice", APIVersion: "rbac.authorization.k8s.io/v1alpha1"},
				{Kind: "Robot", Name: "r2"},
			},
		},
	}, {
		name: "certificates/v1beta1 request that is no PEM goes to the legacy signer",
		obj:  &certificatesv1beta1.CertificateSigningRequest{Spec: certificatesv1beta1.CertificateSigningRequestSpec{Request: []byte("x")}},
		want: &certificatesv1beta1.CertificateSigningRequest{Spec: certificatesv1beta1.CertificateSigningRequestSpec{
			Request: []byte("x"), SignerName: new(certificatesv1beta1.LegacyUnknownSignerName),
			Usages: []certificatesv1beta1.KeyUsage{certificatesv1beta1.UsageDigitalSignature, certificatesv1beta1.UsageKeyEncipherment},
		}},
	}, {
		name: "flowcontrol/v1beta3 priority level keeping zero shares",
		obj: &flowcontrolv1beta3.PriorityLevelConfiguration{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey: ""}},
			Spec:       flowcontrolv1beta3.PriorityLevelConfigurationSpec{Limited: &flowcontrolv1beta3.LimitedPriorityLevelConfiguration{}},
		},
		want: &flowcontrolv1beta3.PriorityLevelConfiguration{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey: ""}},
			Spec:       flowcontrolv1beta3.PriorityLevelConfigurationSpec{Limited: &flowcontrolv1beta3.LimitedPriorityLevelConfiguration{LendablePercent: new(int32(0))}},
		},
	}, {
		name: "resource/v1 device taint stamped to the second",
		obj:  &resourcev1.DeviceTaintRule{},
		want: &resourcev1.DeviceTaintRule{Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{TimeAdded: &metav1.Time{Time: stamp}}}},
	}, {
		name: "storage/v1 CSI driver",
		obj:  &storagev1.CSIDriver{},
		want: &storagev1.CSIDriver{Spec: storagev1.CSIDriverSpec{
			AttachRequired: new(true), PodInfoOnMount: new(false), StorageCapacity: new(false), RequiresRepublish: new(false),
			SELinuxMount: new(false), PreventPodSchedulingIfMissing: new(false),
			FSGroupPolicy:        new(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy),
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent},
		}},
	}, {
		name: "admissionregistration/v1beta1 webhook keeps the v1beta1 defaults",
		obj:  &arv1beta1.ValidatingWebhookConfiguration{Webhooks: []arv1beta1.ValidatingWebhook{{Name: "w", ClientConfig: arv1beta1.WebhookClientConfig{Service: &arv1beta1.ServiceReference{Name: "svc"}}}}},
		want: &arv1beta1.ValidatingWebhookConfiguration{Webhooks: []arv1beta1.ValidatingWebhook{{
			Name: "w", ClientConfig: arv1beta1.WebhookClientConfig{Service: &arv1beta1.ServiceReference{Name: "svc", Port: new(int32(443))}},
			FailurePolicy: new(arv1beta1.Ignore), MatchPolicy: new(arv1beta1.Exact), SideEffects: new(arv1beta1.SideEffectClassUnknown),
			NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
			TimeoutSeconds: new(int32(30)), AdmissionReviewVersions: []string{"v1beta1"},
		}}},
	}, {
		name: "a list is defaulted item by item",
		obj:  &appsv1.ReplicaSetList{Items: []appsv1.ReplicaSet{{}, {Spec: appsv1.ReplicaSetSpec{Replicas: new(int32(0))}}}},
		want: &appsv1.ReplicaSetList{Items: []appsv1.ReplicaSet{
			{Spec: appsv1.ReplicaSetSpec{Replicas: new(int32(1)), Template: templateDefaults(nil)}},
			{Spec: appsv1.ReplicaSetSpec{Replicas: new(int32(0)), Template: templateDefaults(nil)}},
		}},
	}, {
		name: "a kind the API server does not default",
		obj:  &appsv1.ControllerRevision{},
		want: &appsv1.ControllerRevision{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.Default(tt.obj)
			if diff := cmp.Diff(tt.want, tt.obj); diff != "" {
				t.Errorf("defaulted (-want +got):\n%s", diff)
			}
		})
	}
}

// BenchmarkDefaultDeployment measures defaulting a typical Deployment, as
// the MAP path does after every mutation of one.
func BenchmarkDefaultDeployment(b *testing.B) {
	s := runtime.NewScheme()
	if err := appsv1.AddToScheme(s); err != nil {
		b.Fatal(err)
	}
	Register(s)
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "web", Image: "nginx:1.27", Ports: []corev1.ContainerPort{{ContainerPort: 80}},
			}}},
		},
	}}
	b.ReportAllocs()
	for b.Loop() {
		s.Default(d.DeepCopy())
	}
}
