package celenv

import (
	"sort"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/vapkit/vapkit/internal/celvalue"
)

// Names of the object types the admission environment declares.
const (
	requestTypeName   = "kubernetes.AdmissionRequest"
	namespaceTypeName = "kubernetes.Namespace"
	variablesTypeName = "kubernetes.variables"
)

// objectType is a named CEL object type with declared fields. The values
// bound to such a type at runtime are plain maps; the declaration only serves
// the type checker, as in the API server.
type objectType struct {
	name   string
	fields map[string]*types.Type
}

func newObjectType(name string, fields map[string]*types.Type) *objectType {
	return &objectType{name: name, fields: fields}
}

func (o *objectType) celType() *types.Type { return cel.ObjectType(o.name) }

// requestTypes returns kubernetes.AdmissionRequest and the object types it
// refers to, declared as the API server declares them.
func requestTypes() []*objectType {
	gvk := newObjectType("kubernetes.GroupVersionKind", map[string]*types.Type{
		"group": types.StringType, "version": types.StringType, "kind": types.StringType,
	})
	gvr := newObjectType("kubernetes.GroupVersionResource", map[string]*types.Type{
		"group": types.StringType, "version": types.StringType, "resource": types.StringType,
	})
	user := newObjectType("kubernetes.UserInfo", map[string]*types.Type{
		"username": types.StringType,
		"uid":      types.StringType,
		"groups":   types.NewListType(types.StringType),
		"extra":    types.NewMapType(types.StringType, types.NewListType(types.StringType)),
	})
	req := newObjectType(requestTypeName, map[string]*types.Type{
		"kind":               gvk.celType(),
		"resource":           gvr.celType(),
		"subResource":        types.StringType,
		"requestKind":        gvk.celType(),
		"requestResource":    gvr.celType(),
		"requestSubResource": types.StringType,
		"name":               types.StringType,
		"namespace":          types.StringType,
		"operation":          types.StringType,
		"userInfo":           user.celType(),
		"dryRun":             types.BoolType,
		"options":            types.DynType,
	})
	return []*objectType{gvk, gvr, user, req}
}

// namespaceTypes returns kubernetes.Namespace and its parts. The declared
// metadata deliberately mirrors the API server's, including its "UID" field
// that no runtime value carries.
func namespaceTypes() []*objectType {
	strList := types.NewListType(types.StringType)
	strMap := types.NewMapType(types.StringType, types.StringType)
	spec := newObjectType("kubernetes.NamespaceSpec", map[string]*types.Type{"finalizers": strList})
	cond := newObjectType("kubernetes.NamespaceCondition", map[string]*types.Type{
		"status": types.StringType, "type": types.StringType, "lastTransitionTime": types.TimestampType,
		"message": types.StringType, "reason": types.StringType,
	})
	status := newObjectType("kubernetes.NamespaceStatus", map[string]*types.Type{
		"conditions": types.NewListType(cond.celType()), "phase": types.StringType,
	})
	meta := newObjectType("kubernetes.NamespaceMetadata", map[string]*types.Type{
		"name": types.StringType, "generateName": types.StringType, "namespace": types.StringType,
		"labels": strMap, "annotations": strMap, "UID": types.StringType,
		"creationTimestamp": types.TimestampType, "deletionGracePeriodSeconds": types.IntType,
		"deletionTimestamp": types.TimestampType, "generation": types.IntType,
		"resourceVersion": types.StringType, "finalizers": strList,
	})
	ns := newObjectType(namespaceTypeName, map[string]*types.Type{
		"metadata": meta.celType(), "spec": spec.celType(), "status": status.celType(),
	})
	return []*objectType{spec, cond, status, meta, ns}
}

// typeProvider layers vapkit's object types over the environment's own
// provider. It is immutable once the environment that uses it is built.
type typeProvider struct {
	base    types.Provider
	adapter types.Adapter
	objects map[string]*objectType
}

var _ types.Provider = (*typeProvider)(nil)
var _ types.Adapter = (*typeProvider)(nil)

func newTypeProvider(base types.Provider, objs ...*objectType) *typeProvider {
	p := &typeProvider{base: base, adapter: types.DefaultTypeAdapter, objects: make(map[string]*objectType, len(objs))}
	if a, ok := base.(types.Adapter); ok {
		p.adapter = a
	}
	// Maps iterate in sorted key order, so evaluation is deterministic.
	if _, ordered := p.adapter.(*typeProvider); !ordered {
		p.adapter = celvalue.OrderedAdapter(p.adapter)
	}
	for _, o := range objs {
		p.objects[o.name] = o
	}
	return p
}

func (p *typeProvider) EnumValue(name string) ref.Val { return p.base.EnumValue(name) }

func (p *typeProvider) FindIdent(name string) (ref.Val, bool) { return p.base.FindIdent(name) }

func (p *typeProvider) FindStructType(name string) (*types.Type, bool) {
	if o, ok := p.objects[name]; ok {
		return types.NewTypeTypeWithParam(o.celType()), true
	}
	return p.base.FindStructType(name)
}

func (p *typeProvider) FindStructFieldNames(name string) ([]string, bool) {
	o, ok := p.objects[name]
	if !ok {
		return p.base.FindStructFieldNames(name)
	}
	names := make([]string, 0, len(o.fields))
	for n := range o.fields {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, true
}

func (p *typeProvider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	o, ok := p.objects[name]
	if !ok {
		return p.base.FindStructFieldType(name, field)
	}
	t, ok := o.fields[field]
	if !ok {
		return nil, false
	}
	return &types.FieldType{Type: t}, true
}

func (p *typeProvider) NewValue(name string, fields map[string]ref.Val) ref.Val {
	return p.base.NewValue(name, fields)
}

// NativeToValue adapts v. CEL values, which cel-go adapts every selected
// field and variable as, are returned as they are, as every adapter would
// return them, without a dynamic call and two type switches; cel-go's
// adapter dereferences pointers to its primitive values.
func (p *typeProvider) NativeToValue(v any) ref.Val {
	if r, ok := v.(ref.Val); ok {
		switch r.(type) {
		case *types.Bool, *types.Bytes, *types.Double, *types.Int, *types.String, *types.Uint:
		default:
			return r
		}
	}
	return p.adapter.NativeToValue(v)
}

// variableFieldType maps the static type of a compiled variable to the field
// type under which `variables.<name>` is declared. Like the API server, only
// primitives and (nested) lists and maps keep their type; everything else,
// including a variable that failed to compile, is dyn.
func variableFieldType(t *types.Type) *types.Type {
	if t == nil {
		return types.DynType
	}
	switch t {
	case types.AnyType, types.BoolType, types.BytesType, types.DoubleType, types.DurationType,
		types.IntType, types.NullType, types.StringType, types.TimestampType, types.UintType:
		return t
	}
	switch t.Kind() {
	case types.ListKind:
		if ps := t.Parameters(); len(ps) == 1 {
			return types.NewListType(variableFieldType(ps[0]))
		}
	case types.MapKind:
		if ps := t.Parameters(); len(ps) == 2 {
			return types.NewMapType(variableFieldType(ps[0]), variableFieldType(ps[1]))
		}
	}
	return types.DynType
}
