package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/vapkit/vapkit/policy/manifest"
)

// DefaultMaxReviewBytes is the size limit [ReadAdmissionReview] applies
// when given 0: 8 MiB. The API server refuses request bodies over 3 MiB,
// and an UPDATE review carries the object twice plus the options.
const DefaultMaxReviewBytes = 8 << 20

// ErrReviewInvalid is wrapped by every error of [ReadAdmissionReview] about
// the review's content (as opposed to its size, a [*manifest.LimitError],
// or a failure to read); a webhook answers it with 400 Bad Request.
var ErrReviewInvalid = errors.New("invalid AdmissionReview")

// ReadAdmissionReview reads one admission.k8s.io/v1 AdmissionReview from r,
// as a webhook receives it, and checks what evaluation needs:
//
//   - at most maxBytes bytes (0 means [DefaultMaxReviewBytes], negative no
//     limit); more is a [*manifest.LimitError] naming the limit, read no
//     further;
//   - exactly one JSON object: trailing data after it is an error;
//   - apiVersion admission.k8s.io/v1 and kind AdmissionReview;
//   - a request with a uid, which the response must echo.
//
// Errors other than the size limit and read failures wrap
// [ErrReviewInvalid]. The request's objects stay raw JSON until
// [RequestFromAdmission] decodes them.
func ReadAdmissionReview(r io.Reader, maxBytes int64) (*admissionv1.AdmissionReview, error) {
	if maxBytes == 0 {
		maxBytes = DefaultMaxReviewBytes
	}
	if maxBytes > 0 {
		r = io.LimitReader(r, maxBytes+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading AdmissionReview: %w", err)
	}
	if maxBytes > 0 && int64(len(data)) > maxBytes {
		return nil, &manifest.LimitError{Input: "AdmissionReview", Limit: maxBytes, Setting: "the review size limit", Size: -1}
	}
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrReviewInvalid, fmt.Sprintf(format, args...))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var review admissionv1.AdmissionReview
	if err := dec.Decode(&review); err != nil {
		return nil, invalid("decoding: %v", err)
	}
	if off := dec.InputOffset(); len(bytes.TrimSpace(data[off:])) > 0 {
		return nil, invalid("unexpected data after the object at byte %d", off)
	}
	if gvk := review.GroupVersionKind(); gvk != admissionv1.SchemeGroupVersion.WithKind("AdmissionReview") {
		return nil, invalid("got apiVersion %q, kind %q; want admission.k8s.io/v1 AdmissionReview", review.APIVersion, review.Kind)
	}
	if review.Request == nil {
		return nil, invalid("request is missing")
	}
	if review.Request.UID == "" {
		return nil, invalid("request.uid is required")
	}
	return &review, nil
}
