package manifest

import (
	"errors"
	"fmt"
	"io"
	"os"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Set holds the objects read by [Load] and [LoadFiles], grouped by what
// they are for. Within each group, objects keep their order in the input.
type Set struct {
	// Policies and Bindings are in admissionregistration.k8s.io/v1 form,
	// whatever version they were written in, with the defaults the API
	// server stores (failurePolicy Fail, matchPolicy Equivalent, empty
	// selectors, rule scope "*").
	Policies []*admissionregistrationv1.ValidatingAdmissionPolicy
	Bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	// MutatingPolicies and MutatingBindings are the
	// MutatingAdmissionPolicies and their bindings, in v1 form whatever
	// version (v1, v1beta1, v1alpha1) they were written in, with the
	// defaults the API server stores.
	MutatingPolicies []*admissionregistrationv1.MutatingAdmissionPolicy
	MutatingBindings []*admissionregistrationv1.MutatingAdmissionPolicyBinding
	// Namespaces are the v1 Namespace objects.
	Namespaces []*corev1.Namespace
	// CRDs are the apiextensions.k8s.io/v1 CustomResourceDefinitions.
	CRDs []*unstructured.Unstructured
	// Reviews are the admission.k8s.io/v1 AdmissionReviews; their objects
	// stay raw JSON until the evaluator's
	// [github.com/vapkit/vapkit/policy.RequestFromAdmission] decodes them.
	Reviews []*admissionv1.AdmissionReview
	// Objects are all other objects, such as parameter resources, as
	// *unstructured.Unstructured.
	Objects []runtime.Object
}

var crdKind = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// Load reads multi-document YAML or JSON (a single object, a List, or
// documents separated by "---") with [Decode] and groups the objects by
// what they are for. Policies and bindings may be written as
// admissionregistration.k8s.io v1, v1beta1 or v1alpha1; they are converted
// to v1 as the API server converts them. Errors name the file, the line, the
// document number and, where known, the field path, e.g.
//
//	policies.yaml:12: document 2 (ValidatingAdmissionPolicy/p): spec.validations[0].expression: expected string
//
// Load applies [DefaultMaxLoadBytes]; use a [Loader] for another limit.
func Load(data []byte, filename string) (*Set, error) {
	return Loader{}.Load(data, filename)
}

// decodeSet decodes data and groups the objects.
func decodeSet(data []byte, filename string) (*Set, error) {
	docs, err := Decode(data, filename)
	if err != nil {
		return nil, err
	}
	m := &Set{}
	for _, d := range docs {
		switch o := d.Object.(type) {
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			m.Policies = append(m.Policies, o)
		case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
			m.Bindings = append(m.Bindings, o)
		case *admissionregistrationv1.MutatingAdmissionPolicy:
			m.MutatingPolicies = append(m.MutatingPolicies, o)
		case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
			m.MutatingBindings = append(m.MutatingBindings, o)
		case *corev1.Namespace:
			m.Namespaces = append(m.Namespaces, o)
		case *admissionv1.AdmissionReview:
			m.Reviews = append(m.Reviews, o)
		case *unstructured.Unstructured:
			if o.GroupVersionKind() == crdKind {
				m.CRDs = append(m.CRDs, o)
			} else {
				m.Objects = append(m.Objects, o)
			}
		default:
			m.Objects = append(m.Objects, d.Object)
		}
	}
	return m, nil
}

// LoadFiles reads each file with [Load] and merges the results in order,
// applying [DefaultMaxLoadBytes] to each file and to their total; use a
// [Loader] for another limit.
func LoadFiles(paths ...string) (*Set, error) {
	return Loader{}.LoadFiles(paths...)
}

// DefaultMaxLoadBytes is the size limit a zero [Loader], and so [Load] and
// [LoadFiles], applies to each input and to the total of the files read
// together: 64 MiB, far above any sensible set of policies (the API server
// stores objects of at most about 1.5 MiB), low enough that a wrong path,
// such as a disk image or a log, fails fast instead of exhausting memory.
const DefaultMaxLoadBytes = 64 << 20

// Loader reads manifests with a size limit. The zero value is ready to use
// and applies [DefaultMaxLoadBytes].
type Loader struct {
	// MaxBytes bounds each input and the total of [Loader.LoadFiles]; 0
	// means DefaultMaxLoadBytes and a negative value means no limit.
	MaxBytes int64
}

// LimitError reports input over a size limit; use [errors.As] to tell it
// from a decoding error. Its message says which input and which limit.
type LimitError struct {
	// Input names what was too large, such as a file name or
	// "AdmissionReview".
	Input string
	// Limit is the limit in bytes, and Setting the knob that sets it, such
	// as "Loader.MaxBytes".
	Limit   int64
	Setting string
	// Size is the input's size, or -1 when reading stopped at the limit.
	Size int64
}

// Error renders the error as "policies.yaml: 70000000 bytes exceed the
// limit of 67108864 bytes (Loader.MaxBytes)", or "AdmissionReview: larger
// than the limit of 8388608 bytes (...)" when the size is unknown.
func (e *LimitError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("%s: larger than the limit of %d bytes (%s)", e.Input, e.Limit, e.Setting)
	}
	return fmt.Sprintf("%s: %d bytes exceed the limit of %d bytes (%s)", e.Input, e.Size, e.Limit, e.Setting)
}

func (l Loader) limit() int64 {
	if l.MaxBytes == 0 {
		return DefaultMaxLoadBytes
	}
	return l.MaxBytes
}

func (l Loader) check(input string, size int64, setting string) error {
	if max := l.limit(); max >= 0 && size > max {
		return &LimitError{Input: input, Limit: max, Setting: setting, Size: size}
	}
	return nil
}

// Load is [Load] with l's limit on len(data).
func (l Loader) Load(data []byte, filename string) (*Set, error) {
	if err := l.check(inputName(filename), int64(len(data)), "Loader.MaxBytes"); err != nil {
		return nil, err
	}
	return decodeSet(data, filename)
}

// LoadReader reads r to its end, failing with a [*LimitError] as soon as
// more than l's limit has been read, and decodes it as [Load] does.
func (l Loader) LoadReader(r io.Reader, filename string) (*Set, error) {
	max := l.limit()
	if max >= 0 {
		r = io.LimitReader(r, max+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", inputName(filename), err)
	}
	if max >= 0 && int64(len(data)) > max {
		return nil, &LimitError{Input: inputName(filename), Limit: max, Setting: "Loader.MaxBytes", Size: -1}
	}
	return decodeSet(data, filename)
}

// LoadFiles is [LoadFiles] with l's limit on each file and on the total.
// Sizes are checked before a file is read.
func (l Loader) LoadFiles(paths ...string) (*Set, error) {
	if len(paths) == 0 {
		return nil, errors.New("no files given")
	}
	all := &Set{}
	var total int64
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		m, n, err := l.loadFile(f, p, total)
		f.Close()
		if err != nil {
			return nil, err
		}
		total += n
		all.Policies = append(all.Policies, m.Policies...)
		all.Bindings = append(all.Bindings, m.Bindings...)
		all.MutatingPolicies = append(all.MutatingPolicies, m.MutatingPolicies...)
		all.MutatingBindings = append(all.MutatingBindings, m.MutatingBindings...)
		all.Namespaces = append(all.Namespaces, m.Namespaces...)
		all.CRDs = append(all.CRDs, m.CRDs...)
		all.Reviews = append(all.Reviews, m.Reviews...)
		all.Objects = append(all.Objects, m.Objects...)
	}
	return all, nil
}

// loadFile loads one open file after checking its size and the running
// total; it returns the bytes read.
func (l Loader) loadFile(f *os.File, path string, total int64) (*Set, int64, error) {
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
		if err := l.check(path, info.Size(), "Loader.MaxBytes"); err != nil {
			return nil, 0, err
		}
	}
	max := l.limit()
	var r io.Reader = f
	if max >= 0 {
		r = io.LimitReader(f, max+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	n := int64(len(data))
	if max >= 0 && n > max {
		return nil, 0, &LimitError{Input: path, Limit: max, Setting: "Loader.MaxBytes", Size: -1}
	}
	if err := l.check(fmt.Sprintf("files up to %s", path), total+n, "Loader.MaxBytes, for all files together"); err != nil {
		return nil, 0, err
	}
	m, err := decodeSet(data, path)
	return m, n, err
}

func inputName(filename string) string {
	if filename == "" {
		return "<input>"
	}
	return filename
}
