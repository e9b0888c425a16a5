package audit

import (
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/util/validation"
)

// MaxValueLength is the maximum length in bytes of an audit annotation value
// published by a policy. Longer values are cut to this many bytes, as the API
// server does (maxAuditAnnotationValueLength in k8s.io/apiserver
// validating/dispatcher.go).
const MaxValueLength = 10 * 1024

// Annotation is one audit annotation: a key of the form "<prefix>/<name>"
// and its value.
type Annotation struct {
	Key   string
	Value string
}

// Collector gathers the audit annotations of one policy across all its
// bindings and parameters during one admission request, and renders them as
// the API server publishes them (auditAnnotationCollector in k8s.io/apiserver
// validating/dispatcher.go).
//
// Create Collectors with [NewCollector]. The zero value (and a nil
// *Collector) is safe to use but has no policy name, so every key it renders
// is invalid and Annotations returns nothing. A Collector is cheap and meant
// for a single request; it is not safe for concurrent use.
type Collector struct {
	policy string
	keys   []string            // in order of first insertion
	values map[string][]string // distinct values per key, in order of insertion
}

// NewCollector returns an empty Collector for the policy with the given name.
func NewCollector(policyName string) *Collector {
	return &Collector{policy: policyName}
}

// Add records value for the audit annotation key of spec.auditAnnotations, as
// the API server does with the string result of a valueExpression:
//
//   - leading and trailing white space is removed, and a value that is then
//     empty is not recorded (the API server excludes it);
//   - a value longer than [MaxValueLength] bytes is cut to that many bytes.
//     The cut is made on bytes, as upstream makes it, so it may split a
//     multi-byte UTF-8 character; JSON encoders later render the partial
//     character as U+FFFD;
//   - a value equal to one already recorded for the key (after trimming and
//     cutting) is ignored, so identical results of several bindings or
//     parameters appear once.
//
// Add never fails; keys are checked when the annotations are rendered.
func (c *Collector) Add(key, value string) {
	if c == nil {
		return
	}
	value = strings.TrimSpace(value)
	if value == "" {
		return
	}
	if len(value) > MaxValueLength {
		value = value[:MaxValueLength]
	}
	if c.values == nil {
		c.values = make(map[string][]string)
	}
	prev, seen := c.values[key]
	for _, v := range prev {
		if v == value {
			return
		}
	}
	if !seen {
		c.keys = append(c.keys, key)
	}
	c.values[key] = append(prev, value)
}

// Annotations returns the collected annotations, one per key, in the order in
// which each key was first added. The key of each is "<policy name>/<key>";
// its value is the single value recorded for the key or, when several
// distinct values were recorded, all of them in the order added, joined with
// ", ".
//
// Annotations whose full key is not a valid annotation key (a qualified name
// with exactly one "/", such as "my-policy.example.com/replicas") are left
// out: the API server rejects them when it publishes and only logs the
// rejection. Annotations returns nil when there is nothing to publish.
func (c *Collector) Annotations() []Annotation {
	if c == nil {
		return nil
	}
	var out []Annotation
	for _, key := range c.keys {
		full := c.policy + "/" + key
		if !validKey(full) {
			continue
		}
		out = append(out, Annotation{Key: full, Value: strings.Join(c.values[key], ", ")})
	}
	return out
}

// validKey reports whether key is accepted as an admission audit annotation
// key by the API server (checkKeyFormat in k8s.io/apiserver
// pkg/admission/attributes.go).
func validKey(key string) bool {
	if v, ok := validKeys.Load(key); ok {
		return v.(bool)
	}
	valid := strings.Count(key, "/") == 1 && len(validation.IsQualifiedName(key)) == 0
	// The keys are policy names and their annotation keys, few and
	// repeated every request; the regular expression costs more than the
	// rest of collecting.
	if validKeyCount.Load() < maxValidKeys {
		if _, loaded := validKeys.LoadOrStore(key, valid); !loaded {
			validKeyCount.Add(1)
		}
	}
	return valid
}

// validKeys memoizes validKey for up to maxValidKeys keys.
var (
	validKeys     sync.Map // string -> bool
	validKeyCount atomic.Int32
)

const maxValidKeys = 4096
