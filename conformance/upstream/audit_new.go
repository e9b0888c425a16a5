//go:build !vapkit_harness || vapkit_k8s_1_34 || vapkit_k8s_1_35 || vapkit_k8s_1_36

package upstream

import (
	"fmt"

	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit"
)

// initAudit configures ac as the audit filter of these servers does.
func initAudit(ac *audit.AuditContext) error {
	if err := ac.Init(audit.RequestAuditConfig{Level: auditinternal.LevelMetadata}, nil); err != nil {
		return fmt.Errorf("upstream: audit context: %w", err)
	}
	return nil
}

// eventAnnotations returns the annotations of ac's event.
func eventAnnotations(ac *audit.AuditContext) map[string]string { return ac.GetEventAnnotations() }
