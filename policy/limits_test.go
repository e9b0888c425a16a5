package policy_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestReadAdmissionReview(t *testing.T) {
	const ok = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","operation":"CREATE"}}`
	tests := []struct {
		name      string
		body      string
		max       int64
		wantErr   string
		wantLimit bool
	}{
		{name: "valid", body: ok},
		{name: "valid with trailing white space", body: ok + "\n \n"},
		{name: "trailing data", body: ok + `{}`, wantErr: "invalid AdmissionReview: unexpected data after the object at byte"},
		{name: "two reviews", body: ok + ok, wantErr: "unexpected data after the object"},
		{name: "not json", body: "{", wantErr: "invalid AdmissionReview: decoding"},
		{name: "v1beta1", body: `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"u"}}`, wantErr: "want admission.k8s.io/v1 AdmissionReview"},
		{name: "no request", body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, wantErr: "request is missing"},
		{name: "no uid", body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"operation":"CREATE"}}`, wantErr: "request.uid is required"},
		{name: "over the limit", body: ok, max: 20, wantErr: "AdmissionReview: larger than the limit of 20 bytes (the review size limit)", wantLimit: true},
		{name: "exactly the limit", body: ok, max: int64(len(ok))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := policy.ReadAdmissionReview(strings.NewReader(tc.body), tc.max)
			if tc.wantErr == "" {
				if err != nil || got.Request.UID != "u1" {
					t.Fatalf("ReadAdmissionReview() = %v, %v; want the review", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ReadAdmissionReview() error = %v, want containing %q", err, tc.wantErr)
			}
			var le *manifest.LimitError
			if errors.As(err, &le) != tc.wantLimit {
				t.Errorf("errors.As(LimitError) = %t, want %t", !tc.wantLimit, tc.wantLimit)
			}
			if !tc.wantLimit && !errors.Is(err, policy.ErrReviewInvalid) {
				t.Errorf("error %v does not wrap ErrReviewInvalid", err)
			}
		})
	}
}
