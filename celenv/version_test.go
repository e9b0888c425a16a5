package celenv_test

import (
	"testing"

	"github.com/vapkit/vapkit/celenv"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in      string
		want    celenv.Version
		wantErr string
	}{
		{in: "1.30", want: celenv.Version1_30},
		{in: "1.33", want: celenv.Version1_33},
		{in: "v1.37", want: celenv.Version1_37},
		{in: " 1.34 ", want: celenv.Version1_34},
		{in: "1.29", wantErr: "unsupported Kubernetes version 1.29: supported versions are 1.30 to 1.37"},
		{in: "1.38", wantErr: "unsupported Kubernetes version 1.38: supported versions are 1.30 to 1.37"},
		{in: "2.30", wantErr: `invalid Kubernetes version "2.30": want 1.<minor>`},
		{in: "1.x", wantErr: `invalid Kubernetes version "1.x": want 1.<minor>`},
		{in: "1.33.2", wantErr: `invalid Kubernetes version "1.33.2": want 1.<minor>`},
		{in: "", wantErr: `invalid Kubernetes version "": want 1.<minor>`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := celenv.ParseVersion(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("ParseVersion(%q) = %v, %v; want error %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ParseVersion(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestVersionString(t *testing.T) {
	for v := celenv.MinVersion; v <= celenv.MaxVersion; v++ {
		got, err := celenv.ParseVersion(v.String())
		if err != nil || got != v {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", v.String(), got, err, v)
		}
	}
	if got := celenv.Version1_37.String(); got != "1.37" {
		t.Errorf("Version1_37.String() = %q, want %q", got, "1.37")
	}
}
