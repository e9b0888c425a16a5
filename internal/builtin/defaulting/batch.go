package defaulting

import (
	"math"

	batchv1 "k8s.io/api/batch/v1"
	batchv1beta1 "k8s.io/api/batch/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A Job's own fields are defaulted only on Job objects: the job template
// of a CronJob gets its pod failure policy's condition patterns and its pod
// template defaulted, nothing else, as in the API server.

func registerBatchV1(s *runtime.Scheme) {
	add(s, defaultBatchV1Job, func(l *batchv1.JobList) []batchv1.Job { return l.Items })
	add(s, defaultBatchV1CronJob, func(l *batchv1.CronJobList) []batchv1.CronJob { return l.Items })
}

func registerBatchV1beta1(s *runtime.Scheme) {
	add(s, defaultBatchV1beta1CronJob, func(l *batchv1beta1.CronJobList) []batchv1beta1.CronJob { return l.Items })
}

func defaultBatchV1Job(j *batchv1.Job) {
	spec := &j.Spec
	if spec.Completions == nil && spec.Parallelism == nil {
		spec.Completions = new(int32(1))
	}
	if spec.Parallelism == nil {
		spec.Parallelism = new(int32(1))
	}
	if spec.BackoffLimit == nil {
		// With a limit per index, the job-wide limit is effectively off.
		if spec.BackoffLimitPerIndex != nil {
			spec.BackoffLimit = new(int32(math.MaxInt32))
		} else {
			spec.BackoffLimit = new(int32(6))
		}
	}
	if l := spec.Template.Labels; l != nil && len(j.Labels) == 0 {
		j.Labels = l
	}
	if spec.CompletionMode == nil {
		spec.CompletionMode = new(batchv1.NonIndexedCompletion)
	}
	if spec.Suspend == nil {
		spec.Suspend = new(false)
	}
	if spec.PodReplacementPolicy == nil {
		if spec.PodFailurePolicy != nil {
			spec.PodReplacementPolicy = new(batchv1.Failed)
		} else {
			spec.PodReplacementPolicy = new(batchv1.TerminatingOrFailed)
		}
	}
	if spec.ManualSelector == nil {
		spec.ManualSelector = new(false)
	}
	defaultJobTemplateParts(spec)
}

// defaultJobTemplateParts defaults what every job spec gets, whether it
// belongs to a Job or to a CronJob's job template.
func defaultJobTemplateParts(spec *batchv1.JobSpec) {
	if pfp := spec.PodFailurePolicy; pfp != nil {
		for i := range pfp.Rules {
			for j := range pfp.Rules[i].OnPodConditions {
				if p := &pfp.Rules[i].OnPodConditions[j]; p.Status == "" {
					p.Status = corev1.ConditionTrue
				}
			}
		}
	}
	defaultPodTemplateSpec(&spec.Template)
}

func defaultBatchV1CronJob(cj *batchv1.CronJob) {
	spec := &cj.Spec
	if spec.ConcurrencyPolicy == "" {
		spec.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if spec.Suspend == nil {
		spec.Suspend = new(false)
	}
	if spec.SuccessfulJobsHistoryLimit == nil {
		spec.SuccessfulJobsHistoryLimit = new(int32(3))
	}
	if spec.FailedJobsHistoryLimit == nil {
		spec.FailedJobsHistoryLimit = new(int32(1))
	}
	defaultJobTemplateParts(&spec.JobTemplate.Spec)
}

func defaultBatchV1beta1CronJob(cj *batchv1beta1.CronJob) {
	spec := &cj.Spec
	if spec.ConcurrencyPolicy == "" {
		spec.ConcurrencyPolicy = batchv1beta1.AllowConcurrent
	}
	if spec.Suspend == nil {
		spec.Suspend = new(false)
	}
	if spec.SuccessfulJobsHistoryLimit == nil {
		spec.SuccessfulJobsHistoryLimit = new(int32(3))
	}
	if spec.FailedJobsHistoryLimit == nil {
		spec.FailedJobsHistoryLimit = new(int32(1))
	}
	defaultJobTemplateParts(&spec.JobTemplate.Spec)
}
