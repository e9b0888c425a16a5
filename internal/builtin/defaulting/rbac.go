package defaulting

import (
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1alpha1 "k8s.io/api/rbac/v1alpha1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Bindings refer to rbac.authorization.k8s.io roles by default. Their user
// and group subjects belong to that group too, service accounts to the
// core group; v1alpha1 subjects record an API version instead.

const rbacGroup = "rbac.authorization.k8s.io"

func registerRbacV1(s *runtime.Scheme) {
	bind := func(ref *rbacv1.RoleRef, subjects []rbacv1.Subject) {
		if ref.APIGroup == "" {
			ref.APIGroup = rbacGroup
		}
		for i := range subjects {
			defaultSubjectGroup(&subjects[i].APIGroup, subjects[i].Kind)
		}
	}
	add(s, func(b *rbacv1.RoleBinding) { bind(&b.RoleRef, b.Subjects) }, func(l *rbacv1.RoleBindingList) []rbacv1.RoleBinding { return l.Items })
	add(s, func(b *rbacv1.ClusterRoleBinding) { bind(&b.RoleRef, b.Subjects) }, func(l *rbacv1.ClusterRoleBindingList) []rbacv1.ClusterRoleBinding { return l.Items })
}

func registerRbacV1beta1(s *runtime.Scheme) {
	bind := func(ref *rbacv1beta1.RoleRef, subjects []rbacv1beta1.Subject) {
		if ref.APIGroup == "" {
			ref.APIGroup = rbacGroup
		}
		for i := range subjects {
			defaultSubjectGroup(&subjects[i].APIGroup, subjects[i].Kind)
		}
	}
	add(s, func(b *rbacv1beta1.RoleBinding) { bind(&b.RoleRef, b.Subjects) }, func(l *rbacv1beta1.RoleBindingList) []rbacv1beta1.RoleBinding { return l.Items })
	add(s, func(b *rbacv1beta1.ClusterRoleBinding) { bind(&b.RoleRef, b.Subjects) }, func(l *rbacv1beta1.ClusterRoleBindingList) []rbacv1beta1.ClusterRoleBinding { return l.Items })
}

func registerRbacV1alpha1(s *runtime.Scheme) {
	bind := func(ref *rbacv1alpha1.RoleRef, subjects []rbacv1alpha1.Subject) {
		if ref.APIGroup == "" {
			ref.APIGroup = rbacGroup
		}
		for i := range subjects {
			sub := &subjects[i]
			if sub.APIVersion != "" {
				continue
			}
			switch sub.Kind {
			case rbacv1alpha1.ServiceAccountKind:
				sub.APIVersion = "v1"
			case rbacv1alpha1.UserKind, rbacv1alpha1.GroupKind:
				sub.APIVersion = rbacGroup + "/v1alpha1"
			}
		}
	}
	add(s, func(b *rbacv1alpha1.RoleBinding) { bind(&b.RoleRef, b.Subjects) }, func(l *rbacv1alpha1.RoleBindingList) []rbacv1alpha1.RoleBinding { return l.Items })
	add(s, func(b *rbacv1alpha1.ClusterRoleBinding) { bind(&b.RoleRef, b.Subjects) }, func(l *rbacv1alpha1.ClusterRoleBindingList) []rbacv1alpha1.ClusterRoleBinding { return l.Items })
}

// defaultSubjectGroup fills a subject's empty API group from its kind; the
// kinds are spelled alike in every version.
func defaultSubjectGroup(group *string, kind string) {
	if *group != "" {
		return
	}
	switch kind {
	case rbacv1.UserKind, rbacv1.GroupKind:
		*group = rbacGroup
	}
}
