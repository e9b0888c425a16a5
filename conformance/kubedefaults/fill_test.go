package kubedefaults

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// filler fills typed objects sparsely: every pointer, slice and map is
// left nil about half the time and every scalar is left zero about half
// the time, so that the fields defaulting fills are often unset; strings
// that are set are mostly values the defaulting functions look at (enum
// values, resource names), so that the branches depending on them run.
type filler struct {
	r *rand.Rand
	// density is how likely a field is set; each object draws its own, so
	// that nearly empty objects (every volume source nil, say) occur too.
	density float64
	// enums are the constants of k8s.io/api's named string types, by
	// type; a set field of such a type takes one most of the time.
	enums map[reflect.Type][]string
}

// maxDepth bounds the nesting filled, so that recursive types end.
const maxDepth = 12

// vocabulary is the strings a set string field takes most of the time.
// Add the values a group's defaulting branches on when a kind needs them.
var vocabulary = []string{
	// core/v1 enums the defaulting functions compare with.
	"TCP", "UDP", "SCTP", "Always", "IfNotPresent", "Never", "OnFailure",
	"ClusterIP", "NodePort", "LoadBalancer", "ExternalName", "None",
	"Cluster", "Local", "SingleStack", "PreferDualStack", "RequireDualStack",
	"IPv4", "IPv6", "Filesystem", "Block", "File", "FallbackToLogsOnError",
	"ClusterFirst", "ClusterFirstWithHostNet", "Default", "ReadWriteOnce",
	"ReadWriteMany", "ReadOnlyMany", "Retain", "Delete", "Recycle",
	"HTTP", "HTTPS", "Exists", "Equal", "NoSchedule", "NoExecute",
	"Container", "Pod", "PersistentVolumeClaim", "RuntimeDefault",
	"Unconfined", "Localhost", "ClientIP", "Honor", "Ignore", "Fail",
	"OrderedReady", "Parallel", "RollingUpdate", "Recreate", "OnDelete",
	"Allow", "Forbid", "Replace", "NonIndexed", "Indexed", "Exact",
	"Equivalent", "ReadWrite", "ReadOnly", "Shared", "Dedicated",
	"ext4", "xfs", "None", "Bidirectional", "HostToContainer",
	"Enabled", "Disabled", "IfHealthyBudget", "AlwaysAllow",
	"Retain", "WaitForFirstConsumer", "Immediate", "Service", "Secret",
	"/dev/termination-log", "default", "kube-system", "v1", "apps",
	// values the other groups' defaulting compares with: device
	// allocation modes, RBAC subject kinds, network policy types,
	// certificate key usages, the flow control annotation kept as a key.
	"ExactCount", "ServiceAccount", "User", "Group", "Ingress", "Egress",
	"digital signature", "key encipherment", "client auth", "server auth",
	"flowcontrol.kubernetes.io/preserve-zero-concurrency-shares",
	// resource names, for resource lists keyed by them.
	"cpu", "memory", "storage", "ephemeral-storage", "pods",
	"requests.cpu", "limits.memory", "hugepages-2Mi", "example.com/gpu",
}

var quantities = []string{"0", "1", "100m", "250m", "2", "64Mi", "1Gi", "10G"}

var fixedTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

var (
	quantityType     = reflect.TypeFor[resource.Quantity]()
	intOrStringType  = reflect.TypeFor[intstr.IntOrString]()
	timeType         = reflect.TypeFor[metav1.Time]()
	microTimeType    = reflect.TypeFor[metav1.MicroTime]()
	rawExtensionType = reflect.TypeFor[runtime.RawExtension]()
	typeMetaType     = reflect.TypeFor[metav1.TypeMeta]()
)

// densities are the field densities objects are filled with.
var densities = []float64{0.05, 0.2, 0.5, 0.5, 0.8}

// fillObject fills obj (a pointer to a struct) sparsely.
func (f *filler) fillObject(obj any) {
	f.density = densities[f.r.IntN(len(densities))]
	f.fill(reflect.ValueOf(obj).Elem(), 0)
}

func (f *filler) set() bool { return f.r.Float64() < f.density }

// fieldStrings are the values of string fields known by name whose value
// defaulting parses.
var fieldStrings = map[string]func(*rand.Rand) string{
	"Image":     randomImage,
	"Reference": randomImage,
}

func (f *filler) fill(v reflect.Value, depth int) {
	if depth > maxDepth {
		return
	}
	switch v.Type() {
	case quantityType:
		if f.set() {
			v.Set(reflect.ValueOf(resource.MustParse(quantities[f.r.IntN(len(quantities))])))
		}
		return
	case intOrStringType:
		if f.set() {
			if f.set() {
				v.Set(reflect.ValueOf(intstr.FromInt32(f.r.Int32N(100))))
			} else {
				v.Set(reflect.ValueOf(intstr.FromString(f.str())))
			}
		}
		return
	case timeType:
		if f.set() {
			v.Set(reflect.ValueOf(metav1.NewTime(fixedTime)))
		}
		return
	case microTimeType:
		if f.set() {
			v.Set(reflect.ValueOf(metav1.NewMicroTime(fixedTime)))
		}
		return
	case rawExtensionType, typeMetaType:
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if f.set() {
			v.Set(reflect.New(v.Type().Elem()))
			f.fill(v.Elem(), depth+1)
		}
	case reflect.Slice:
		if f.set() {
			n := f.r.IntN(3)
			v.Set(reflect.MakeSlice(v.Type(), n, n))
			for i := range n {
				f.fill(v.Index(i), depth+1)
			}
		}
	case reflect.Map:
		if f.set() {
			v.Set(reflect.MakeMap(v.Type()))
			for range f.r.IntN(3) {
				k := reflect.New(v.Type().Key()).Elem()
				f.fill(k, depth+1)
				e := reflect.New(v.Type().Elem()).Elem()
				f.fill(e, depth+1)
				v.SetMapIndex(k, e)
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			field := v.Type().Field(i)
			if !field.IsExported() {
				continue
			}
			if gen := fieldStrings[field.Name]; gen != nil && field.Type.Kind() == reflect.String {
				if f.set() {
					v.Field(i).SetString(gen(f.r))
				}
				continue
			}
			f.fill(v.Field(i), depth+1)
		}
	case reflect.String:
		if f.set() {
			if values := f.enums[v.Type()]; len(values) > 0 && f.r.IntN(4) != 0 {
				v.SetString(values[f.r.IntN(len(values))])
			} else {
				v.SetString(f.str())
			}
		}
	case reflect.Bool:
		v.SetBool(f.set())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if f.set() {
			v.SetInt(f.r.Int64N(200) - 20)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if f.set() {
			v.SetUint(f.r.Uint64N(200))
		}
	case reflect.Float32, reflect.Float64:
		if f.set() {
			v.SetFloat(f.r.Float64() * 100)
		}
	case reflect.Interface:
		// Left nil: no k8s.io/api field defaulting looks into one.
	default:
		panic(fmt.Sprintf("filler: cannot fill %v", v.Type()))
	}
}

// str is a set string: mostly from the vocabulary, sometimes random.
func (f *filler) str() string {
	if f.r.IntN(5) == 0 {
		return fmt.Sprintf("s%d", f.r.IntN(1000))
	}
	return vocabulary[f.r.IntN(len(vocabulary))]
}
