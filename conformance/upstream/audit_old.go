//go:build vapkit_harness && (vapkit_k8s_1_30 || vapkit_k8s_1_31 || vapkit_k8s_1_32 || vapkit_k8s_1_33)

package upstream

import (
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit"
)

// initAudit configures ac as the audit filter of these servers does: the
// request's audit level on both the configuration and the event (admission
// annotations are read at the event's level).
func initAudit(ac *audit.AuditContext) error {
	ac.RequestAuditConfig = audit.RequestAuditConfig{Level: auditinternal.LevelMetadata}
	ac.Event.Level = auditinternal.LevelMetadata
	return nil
}

// eventAnnotations returns the annotations of ac's event.
func eventAnnotations(ac *audit.AuditContext) map[string]string { return ac.Event.Annotations }
