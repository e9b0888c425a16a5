package celvalue

import (
	"math"
	"reflect"
	"sync"
	"unicode/utf8"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func (w *sizeWalker) resourceListSize(m corev1.ResourceList) uint64 {
	b := uint64(len(m))
	for k, q := range m {
		b = max(b, uint64(len(k)), w.quantitySize(&q))
	}
	return b
}

// timeSize bounds metav1.Time's converter output: null for the zero time,
// otherwise the UTC time in RFC 3339, whose only part of varying length is
// the year.
func timeSize(t *metav1.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	// "2006-01-02T15:04:05Z": the year has at least 4 digits, and a sign
	// if negative; 16 characters follow.
	y := t.UTC().Year()
	n := uint64(16)
	if y < 0 {
		n++
		y = -y
	}
	d := uint64(1)
	for ; y >= 10; y /= 10 {
		d++
	}
	return n + max(d, 4)
}

// quantitySize bounds resource.Quantity's converter output, its String:
// the cached string if set, otherwise the canonical form.
func (w *sizeWalker) quantitySize(q *resource.Quantity) uint64 {
	if n := len(*(*string)(unsafe.Add(unsafe.Pointer(q), quantityCached))); n > 0 {
		return uint64(n)
	}
	if q.Format == resource.BinarySI && (q.CmpInt64(-1024) <= 0 || q.CmpInt64(1024) >= 0) {
		// Here CanonicalizeBytes allocates (AsScale returns an
		// interface). An integer is written as itself with its factors
		// of 1024 moved into a suffix, Ki to Ei.
		i, ok := q.AsInt64()
		if !ok || i == math.MinInt64 {
			return w.val(convertValue(reflect.ValueOf(*q)))
		}
		n := uint64(0)
		if i < 0 {
			n, i = 1, -i
		}
		if i%1024 == 0 {
			n += 2
			for i%1024 == 0 {
				i /= 1024
			}
		}
		for n++; i >= 10; i /= 10 {
			n++
		}
		return n
	}
	// CanonicalizeBytes only reads the quantity. Its buffer escapes, so
	// it comes from a pool.
	buf := quantityBufs.Get().(*[]byte)
	num, suffix := q.CanonicalizeBytes((*buf)[:0])
	n := uint64(len(num) + len(suffix))
	quantityBufs.Put(buf)
	return n
}

var quantityBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, 64)
	return &b
}}

// intOrStringSize bounds intstr.IntOrString's converter output: nothing for
// an integer, the string otherwise.
func intOrStringSize(x *intstr.IntOrString) uint64 {
	switch x.Type {
	case intstr.Int:
		return 0
	case intstr.String:
		// MarshalJSON writes each invalid UTF-8 byte as U+FFFD, three
		// bytes once decoded.
		if utf8.ValidString(x.StrVal) {
			return uint64(len(x.StrVal))
		}
		return 3 * uint64(len(x.StrVal))
	}
	// Other types fail to convert: an error value.
	return 0
}
