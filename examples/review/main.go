// Command review evaluates one case file in the shared case format (the
// cluster's policies, bindings, params and namespaces, plus one
// AdmissionReview request) and prints the AdmissionReview response the API
// server would return, as JSON.
//
// Usage:
//
//	go run ./examples/review CASE.yaml
//
// Bad input exits with status 1 and a one-line error naming the document.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vapkit/vapkit/internal/casefile"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "review: "+strings.ReplaceAll(err.Error(), "\n", " "))
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: review CASE.yaml")
	}
	c, err := casefile.ParseFile(args[0])
	if err != nil {
		return err
	}
	resp, err := c.Review(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{Kind: "AdmissionReview", APIVersion: "admission.k8s.io/v1"},
		Response: resp,
	}
	b, err := json.MarshalIndent(review, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}
