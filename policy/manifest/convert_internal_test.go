package manifest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	admissionregistrationv1alpha1 "k8s.io/api/admissionregistration/v1alpha1"
	admissionregistrationv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fill sets every exported field reachable from v to a distinct non-zero
// value, so that a conversion that forgets a field shows up as a difference.
func fill(v reflect.Value, n *int) {
	switch v.Type() {
	case reflect.TypeFor[metav1.ObjectMeta]():
		v.Set(reflect.ValueOf(metav1.ObjectMeta{Name: "obj", Labels: map[string]string{"a": "b"}}))
		return
	case reflect.TypeFor[metav1.Time]():
		return // zero time: its fields are unexported
	}
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), n)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		e := reflect.New(v.Type().Elem()).Elem()
		fill(k, n)
		fill(e, n)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Bool:
		v.SetBool(true)
	}
}

// TestConversionComplete checks that converting fully populated v1beta1 and
// v1alpha1 objects loses nothing: the versions share one JSON shape, so the
// converted object must marshal exactly as the input does.
func TestConversionComplete(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      any
		convert func(any) any
	}{{
		name: "v1beta1 policy",
		in:   &admissionregistrationv1beta1.ValidatingAdmissionPolicy{},
		convert: func(in any) any {
			return policyFromV1beta1(in.(*admissionregistrationv1beta1.ValidatingAdmissionPolicy))
		},
	}, {
		name: "v1beta1 binding",
		in:   &admissionregistrationv1beta1.ValidatingAdmissionPolicyBinding{},
		convert: func(in any) any {
			return bindingFromV1beta1(in.(*admissionregistrationv1beta1.ValidatingAdmissionPolicyBinding))
		},
	}, {
		name: "v1alpha1 policy",
		in:   &admissionregistrationv1alpha1.ValidatingAdmissionPolicy{},
		convert: func(in any) any {
			return policyFromV1alpha1(in.(*admissionregistrationv1alpha1.ValidatingAdmissionPolicy))
		},
	}, {
		name: "v1alpha1 binding",
		in:   &admissionregistrationv1alpha1.ValidatingAdmissionPolicyBinding{},
		convert: func(in any) any {
			return bindingFromV1alpha1(in.(*admissionregistrationv1alpha1.ValidatingAdmissionPolicyBinding))
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := 0
			fill(reflect.ValueOf(tc.in).Elem(), &n)
			out := tc.convert(tc.in)
			// The converted object names v1; give the input the same TypeMeta.
			tm := reflect.ValueOf(out).Elem().FieldByName("TypeMeta")
			reflect.ValueOf(tc.in).Elem().FieldByName("TypeMeta").Set(tm)
			want, err := json.Marshal(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(out)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("convert() =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestSplitYAML(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []segment
	}{{
		name: "no separator",
		in:   "# c\na: 1\n",
		want: []segment{{text: []byte("# c\na: 1\n"), firstLine: 1, content: 2}},
	}, {
		name: "header dropped",
		in:   "# c\n--- # start\na: 1\n",
		want: []segment{{text: []byte("a: 1\n"), firstLine: 3, content: 3}},
	}, {
		name: "empty between",
		in:   "a: 1\n---\n---\nb: 1",
		want: []segment{
			{text: []byte("a: 1\n"), firstLine: 1, content: 1},
			{text: []byte(""), firstLine: 3},
			{text: []byte("b: 1"), firstLine: 4, content: 4},
		},
	}, {
		name: "not separators",
		in:   "a: ---\n---x: 1\n",
		want: []segment{{text: []byte("a: ---\n---x: 1\n"), firstLine: 1, content: 1}},
	}, {
		name: "inline content",
		in:   "--- {a: 1}\n",
		want: []segment{{text: []byte("--- {a: 1}\n"), firstLine: 1, content: 1}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := splitYAML([]byte(tc.in))
			if !reflect.DeepEqual(normalize(got), normalize(tc.want)) {
				t.Errorf("splitYAML(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

// normalize makes empty texts comparable regardless of nil-ness.
func normalize(segs []segment) []segment {
	out := make([]segment, len(segs))
	for i, s := range segs {
		out[i] = s
		if len(s.text) == 0 {
			out[i].text = nil
		}
	}
	return out
}

func TestFieldPathString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path fieldPath
		want string
	}{
		{nil, ""},
		{fieldPath{}.child("spec"), "spec"},
		{fieldPath{}.child("spec").child("validations").index(1).child("expression"), "spec.validations[1].expression"},
		{fieldPath{}.index(0).index(2), "[0][2]"},
	}
	for _, tc := range tests {
		if got := tc.path.String(); got != tc.want {
			t.Errorf("fieldPath.String() = %q, want %q", got, tc.want)
		}
	}
}
