package mapdiff

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/conformance/kubedefaults"
	"github.com/vapkit/vapkit/conformance/upstream"
)

// typeConverters serves client-go's type converter (the structured-merge-diff
// schema Kubernetes generates from its own OpenAPI) for every built-in
// kind, and none for other kinds, which the dispatcher answers with 503.
type typeConverters struct{ tc managedfields.TypeConverter }

func (t typeConverters) GetTypeConverter(gvk schema.GroupVersionKind) managedfields.TypeConverter {
	if clientgoscheme.Scheme.Recognizes(gvk) {
		return t.tc
	}
	return nil
}

func (typeConverters) Run(context.Context) {}

// objects implements admission.ObjectInterfaces over the client-go scheme,
// with kube-apiserver 1.37's defaulting functions (package kubedefaults:
// k8s.io/kubernetes's, which the dispatcher runs after every mutation) and
// same-type conversion as a copy, which the dispatcher's write-back into
// the request object needs.
type objects struct {
	equivalent runtime.EquivalentResourceMapper
}

func (objects) GetObjectCreater() runtime.ObjectCreater     { return clientgoscheme.Scheme }
func (objects) GetObjectTyper() runtime.ObjectTyper         { return clientgoscheme.Scheme }
func (objects) GetObjectDefaulter() runtime.ObjectDefaulter { return kubedefaults.Defaulter }
func (objects) GetObjectConvertor() runtime.ObjectConvertor { return convertor{} }
func (o objects) GetEquivalentResourceMapper() runtime.EquivalentResourceMapper {
	return o.equivalent
}

type convertor struct{}

func (convertor) Convert(in, out, context any) error {
	if u, ok := in.(*unstructured.Unstructured); ok {
		if uo, ok := out.(*unstructured.Unstructured); ok {
			uo.Object = runtime.DeepCopyJSON(u.Object)
			return nil
		}
	}
	// Same Go type: a deep copy through JSON into a zeroed out, as a
	// generated conversion overwrites every field.
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	v := reflect.ValueOf(out).Elem()
	v.Set(reflect.Zero(v.Type()))
	return json.Unmarshal(b, out)
}

func (convertor) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	return clientgoscheme.Scheme.ConvertToVersion(in, gv)
}

func (convertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return clientgoscheme.Scheme.ConvertFieldLabel(gvk, label, value)
}

// compilePolicy re-creates the mutating plugin's unexported compilePolicy
// with the same exported calls.
func compilePolicy(p *admissionregistrationv1.MutatingAdmissionPolicy) mutating.PolicyEvaluator {
	opts := plugincel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return mutating.PolicyEvaluator{Error: err}
	}
	var vars []plugincel.NamedExpressionAccessor
	for _, v := range p.Spec.Variables {
		vars = append(vars, &validating.Variable{Name: v.Name, Expression: v.Expression})
	}
	compiler.CompileAndStoreVariables(vars, opts, environment.StoredExpressions)
	var matcher matchconditions.Matcher
	if mcs := p.Spec.MatchConditions; len(mcs) > 0 {
		acc := make([]plugincel.ExpressionAccessor, len(mcs))
		for i := range mcs {
			acc[i] = (*matchconditions.MatchCondition)(&mcs[i])
		}
		matcher = matchconditions.NewMatcher(compiler.CompileCondition(acc, opts, environment.StoredExpressions), p.Spec.FailurePolicy, "policy", "validate", p.Name)
	}
	popts := opts
	popts.HasPatchTypes = true
	var patchers []patch.Patcher
	for _, m := range p.Spec.Mutations {
		switch {
		case m.PatchType == admissionregistrationv1.PatchTypeJSONPatch && m.JSONPatch != nil:
			patchers = append(patchers, patch.NewJSONPatcher(compiler.CompileMutatingEvaluator(&patch.JSONPatchCondition{Expression: m.JSONPatch.Expression}, popts, environment.StoredExpressions)))
		case m.PatchType == admissionregistrationv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			patchers = append(patchers, patch.NewApplyConfigurationPatcher(compiler.CompileMutatingEvaluator(&patch.ApplyConfigurationCondition{Expression: m.ApplyConfiguration.Expression}, popts, environment.StoredExpressions)))
		}
	}
	return mutating.PolicyEvaluator{Matcher: matcher, Mutators: patchers, CompositedCompiler: compiler}
}

// defaultMAP applies the API server's v1 defaults to a copy.
func defaultMAP(p *admissionregistrationv1.MutatingAdmissionPolicy) *admissionregistrationv1.MutatingAdmissionPolicy {
	p = p.DeepCopy()
	if p.Spec.FailurePolicy == nil {
		f := admissionregistrationv1.Fail
		p.Spec.FailurePolicy = &f
	}
	upstream.DefaultMatchResources(p.Spec.MatchConstraints)
	return p
}

// Mutator is upstream's mutating phase of one case, set up once: the
// MutatingAdmissionPolicy dispatcher of k8s.io/apiserver v0.37.2 with the
// case's policies compiled, as the mutating plugin holds them after its
// policy source synced. A Mutator belongs to one goroutine.
type Mutator struct {
	disp  generic.Dispatcher[mutating.PolicyHook]
	hooks []mutating.PolicyHook
	vc    *upstream.Case
	kind  schema.GroupVersionKind
	gvr   schema.GroupVersionResource
	o     objects
	ui    user.Info
}

// MutateUpstream runs the mutating phase of c once, as the API server's
// admission chain does (see [Mutator.Run]); vc is c.Rest parsed by
// [upstream.ParseCase]. It returns the mutated request object or the error.
func MutateUpstream(ctx context.Context, c *Case, vc *upstream.Case) (runtime.Object, error) {
	m, err := NewMutator(ctx, c, vc)
	if err != nil {
		return nil, err
	}
	return m.Run(ctx)
}

// NewMutator compiles c's mutating policies with the mutating plugin's
// compiler, defaulted as the API server stores them, gives the policies
// with built-in paramKinds informers over vc's params, and starts the
// dispatcher with vc's namespaces and authorizer rules; vc is c.Rest
// parsed by [upstream.ParseCase]. ctx bounds the informers' lifetime.
func NewMutator(ctx context.Context, c *Case, vc *upstream.Case) (*Mutator, error) {
	var hooks []mutating.PolicyHook
	for _, p := range c.Policies {
		dp := defaultMAP(p)
		h := mutating.PolicyHook{Policy: dp, Evaluator: compilePolicy(dp)}
		for _, b := range c.Bindings {
			if b.Spec.PolicyName == p.Name {
				db := b.DeepCopy()
				upstream.DefaultMatchResources(db.Spec.MatchResources)
				h.Bindings = append(h.Bindings, db)
			}
		}
		if len(h.Bindings) > 0 {
			hooks = append(hooks, h)
		}
	}
	nsIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	client := fake.NewSimpleClientset()
	for _, ns := range vc.Namespaces {
		if err := nsIndexer.Add(ns.DeepCopy()); err != nil {
			return nil, err
		}
	}
	for _, p := range vc.Params {
		if err := client.Tracker().Add(p.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	if err := paramInformers(ctx, client, hooks); err != nil {
		return nil, err
	}
	authz, err := upstream.NewRulesAuthorizer(vc.AuthorizerRules)
	if err != nil {
		return nil, err
	}
	disp := mutating.NewDispatcher(authz, matching.NewMatcher(listersv1.NewNamespaceLister(nsIndexer), client),
		typeConverters{tc: applyconfigurations.NewTypeConverter(clientgoscheme.Scheme)})
	if err := disp.Start(ctx); err != nil {
		return nil, err
	}
	req := vc.Request
	m := &Mutator{disp: disp, hooks: hooks, vc: vc,
		kind: schema.GroupVersionKind{Group: req.Kind.Group, Version: req.Kind.Version, Kind: req.Kind.Kind},
		gvr:  schema.GroupVersionResource{Group: req.Resource.Group, Version: req.Resource.Version, Resource: req.Resource.Resource},
		ui:   &user.DefaultInfo{Name: req.UserInfo.Username, UID: req.UserInfo.UID, Groups: req.UserInfo.Groups},
	}
	reg := runtime.NewEquivalentResourceRegistry()
	reg.RegisterKindFor(m.gvr, req.SubResource, m.kind)
	m.o = objects{equivalent: reg}
	return m, nil
}

// Run admits the case's request once, as the API server's admission chain
// runs the mutating plugin: a deep copy of the request's object (the
// server's conversion of the decoded object into the versioned one that the
// plugin mutates), one Dispatch, and a second one marked as reinvocation
// when the first asked for it. It returns the mutated object (the copy),
// or the dispatcher's error. Requests other than CREATE, UPDATE and
// CONNECT are returned unmutated, as the plugin admits nothing else.
func (m *Mutator) Run(ctx context.Context) (runtime.Object, error) {
	req, vc := m.vc.Request, m.vc
	dryRun := req.DryRun != nil && *req.DryRun
	var obj, old, opts runtime.Object
	if vc.Object != nil {
		obj = vc.Object.DeepCopyObject()
	}
	if vc.OldObject != nil {
		old = vc.OldObject.DeepCopyObject()
	}
	if vc.Options != nil {
		opts = vc.Options.DeepCopyObject()
	}
	if !slices.Contains([]admissionv1.Operation{admissionv1.Create, admissionv1.Update, admissionv1.Connect}, req.Operation) {
		return obj, nil // the plugin's handler admits nothing else
	}
	attrs := admission.NewAttributesRecord(obj, old, m.kind, req.Namespace, req.Name, m.gvr, req.SubResource,
		admission.Operation(req.Operation), opts, dryRun, m.ui)
	if err := m.disp.Dispatch(ctx, attrs, m.o, m.hooks); err != nil {
		return nil, err
	}
	if rc := attrs.GetReinvocationContext(); rc.ShouldReinvoke() {
		rc.SetIsReinvoke()
		if err := m.disp.Dispatch(ctx, attrs, m.o, m.hooks); err != nil {
			return nil, err
		}
	}
	return attrs.GetObject(), nil
}

// paramInformers gives every hook with a built-in paramKind an informer
// over the fake client's objects, synced, as the policy source does.
func paramInformers(ctx context.Context, client *fake.Clientset, hooks []mutating.PolicyHook) error {
	factory := informers.NewSharedInformerFactory(client, 0)
	for i := range hooks {
		pk := hooks[i].Policy.Spec.ParamKind
		if pk == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(pk.APIVersion)
		if err != nil {
			return err
		}
		mapping, err := restMapper().RESTMapping(gv.WithKind(pk.Kind).GroupKind(), gv.Version)
		if err != nil {
			hooks[i].ConfigurationError = fmt.Errorf("failed to find resource referenced by paramKind: '%v'", gv.WithKind(pk.Kind))
			continue
		}
		inf, err := factory.ForResource(mapping.Resource)
		if err != nil {
			return err
		}
		hooks[i].ParamInformer, hooks[i].ParamScope = inf, mapping.Scope
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return nil
}

// restMapper knows the built-in kinds params may have.
func restMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, meta.RESTScopeNamespace)
	return m
}

// StatusOf renders an admission error as the API server sends it.
func StatusOf(err error) *metav1.Status {
	s := responsewriters.ErrorToAPIStatus(err)
	s.TypeMeta = metav1.TypeMeta{}
	return s
}

// Case is one case file split for the two halves of the chain: its
// MutatingAdmissionPolicies and their bindings, and the rest of the
// documents (validating policies, namespaces, params, the AdmissionReview)
// as YAML that [upstream.ParseCase] reads.
type Case struct {
	// Name is the name given to ParseCase.
	Name string
	// Policies and Bindings are the case's v1 MutatingAdmissionPolicies
	// and MutatingAdmissionPolicyBindings, as written (not defaulted).
	Policies []*admissionregistrationv1.MutatingAdmissionPolicy
	Bindings []*admissionregistrationv1.MutatingAdmissionPolicyBinding
	// Rest is every other document, joined with "---" lines.
	Rest []byte
	// All is the whole case, as given to ParseCase.
	All []byte
}

// ParseCase splits a multi-document YAML case; name is used in error
// messages.
func ParseCase(data []byte, name string) (*Case, error) {
	c := &Case{Name: name, All: data}
	var rest [][]byte
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		switch {
		case tm.APIVersion == "admissionregistration.k8s.io/v1" && tm.Kind == "MutatingAdmissionPolicy":
			p := &admissionregistrationv1.MutatingAdmissionPolicy{}
			if err := yaml.UnmarshalStrict(doc, p); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			c.Policies = append(c.Policies, p)
		case tm.APIVersion == "admissionregistration.k8s.io/v1" && tm.Kind == "MutatingAdmissionPolicyBinding":
			b := &admissionregistrationv1.MutatingAdmissionPolicyBinding{}
			if err := yaml.UnmarshalStrict(doc, b); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			c.Bindings = append(c.Bindings, b)
		default:
			rest = append(rest, doc)
		}
	}
	c.Rest = bytes.Join(rest, []byte("\n---\n"))
	return c, nil
}
