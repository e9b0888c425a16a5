package reviewcmd

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/vapkit/vapkit/policy/casefile"
)

// Output formats.
const (
	formatText  = "text"
	formatJSON  = "json"
	formatJUnit = "junit"
)

// writeReport writes r to w in format.
func writeReport(w io.Writer, r *report, format string) error {
	switch format {
	case formatJSON:
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case formatJUnit:
		return writeJUnit(w, r)
	}
	return writeText(w, r)
}

// writeText writes r the way go test reports packages: a line per case,
// the details of failures indented, then PASS or FAIL and a summary line
// per suite.
func writeText(w io.Writer, r *report) error {
	var b strings.Builder
	for _, s := range r.Suites {
		for _, c := range s.Cases {
			switch c.Status {
			case statusPass:
				if r.quiet {
					continue
				}
				fmt.Fprintf(&b, "--- PASS: %s\n", c.Name)
				if r.verbose && c.Response != nil {
					indent(&b, "    ", describeResponse(c.Response))
				}
			case statusSkip:
				fmt.Fprintf(&b, "--- SKIP: %s\n", c.Name)
				indent(&b, "    ", c.SkipReason)
			case statusError:
				// Not a failed expectation: the case could not be run, or
				// the API server would refuse its objects.
				fmt.Fprintf(&b, "--- ERROR: %s\n", c.Name)
				indent(&b, "    ", c.Error)
			case statusFail:
				if c.inSuite {
					// A suite's tests share a file: name the test's line.
					fmt.Fprintf(&b, "--- FAIL: %s (%s)\n", c.Name, c.File)
				} else {
					fmt.Fprintf(&b, "--- FAIL: %s\n", c.Name)
				}
				if r.verbose && c.Response != nil {
					indent(&b, "    ", describeResponse(c.Response))
				}
				for _, f := range c.Failures {
					fmt.Fprintf(&b, "    %s: %s (-want +got):\n", f.Location, f.Field)
					indent(&b, "        ", f.Diff)
				}
			}
		}
		counts := fmt.Sprintf("%d passed", s.Summary.Passed)
		if s.Summary.Failed > 0 {
			counts += fmt.Sprintf(", %d failed", s.Summary.Failed)
		}
		switch s.Summary.Errors {
		case 0:
		case 1:
			counts += ", 1 error"
		default:
			counts += fmt.Sprintf(", %d errors", s.Summary.Errors)
		}
		if s.Summary.Skipped > 0 {
			counts += fmt.Sprintf(", %d skipped", s.Summary.Skipped)
		}
		if s.Summary.ok() {
			fmt.Fprintf(&b, "PASS\nok  \t%s\t%s (Kubernetes %s)\n", s.Path, counts, r.KubernetesVersion)
		} else {
			fmt.Fprintf(&b, "FAIL\nFAIL\t%s\t%s (Kubernetes %s)\n", s.Path, counts, r.KubernetesVersion)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if len(r.Coverage) > 0 {
		return writeCoverage(w, r.Coverage)
	}
	return nil
}

// describeResponse renders the decision a case got, for -v.
func describeResponse(c *casefile.Comparable) string {
	var b strings.Builder
	if c.Allowed {
		b.WriteString("allowed")
	} else {
		fmt.Fprintf(&b, "denied: %d %s: %s", c.Code, c.Reason, c.Message)
	}
	for _, w := range c.Warnings {
		fmt.Fprintf(&b, "\nwarning: %s", w)
	}
	for _, k := range slices.Sorted(maps.Keys(c.AuditAnnotations)) {
		fmt.Fprintf(&b, "\naudit annotation %s: %s", k, c.AuditAnnotations[k])
	}
	return b.String()
}

// indent writes each line of text with prefix.
func indent(b *strings.Builder, prefix, text string) {
	for line := range strings.SplitSeq(text, "\n") {
		b.WriteString(prefix + line + "\n")
	}
}

// JUnit XML, in the shape CI systems (Jenkins, GitLab, GitHub actions)
// read: testsuites > testsuite > testcase with failure, error or skipped.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Failure   *junitProblem `xml:"failure"`
	Error     *junitProblem `xml:"error"`
	Skipped   *junitProblem `xml:"skipped"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes r as JUnit XML. encoding/xml escapes markup and
// replaces characters XML cannot hold, so the document stays well formed
// whatever policies and requests contain.
func writeJUnit(w io.Writer, r *report) error {
	out := junitSuites{
		Name:     "vapkit review",
		Tests:    r.Summary.Total,
		Failures: r.Summary.Failed,
		Errors:   r.Summary.Errors,
		Skipped:  r.Summary.Skipped,
	}
	for _, s := range r.Suites {
		js := junitSuite{
			Name:       s.Path,
			Tests:      s.Summary.Total,
			Failures:   s.Summary.Failed,
			Errors:     s.Summary.Errors,
			Skipped:    s.Summary.Skipped,
			Properties: []junitProperty{{Name: "kubernetes-version", Value: r.KubernetesVersion}},
		}
		for _, c := range s.Cases {
			jc := junitCase{Name: c.Name, Classname: s.Path, File: c.File}
			switch c.Status {
			case statusSkip:
				jc.Skipped = &junitProblem{Message: c.SkipReason}
			case statusError:
				jc.Error = &junitProblem{Message: firstLine(c.Error), Type: "error", Text: c.Error}
			case statusFail:
				var text strings.Builder
				for _, f := range c.Failures {
					fmt.Fprintf(&text, "%s: %s (-want +got):\n%s\n", f.Location, f.Field, f.Diff)
				}
				f := c.Failures[0]
				msg := fmt.Sprintf("%s: %s: want %s, got %s", f.Location, f.Field, f.Want, f.Got)
				if strings.Contains(f.Want+f.Got, "\n") {
					msg = fmt.Sprintf("%s: %s: differs", f.Location, f.Field)
				}
				if n := len(c.Failures); n > 1 {
					msg += fmt.Sprintf(" (and %d more)", n-1)
				}
				jc.Failure = &junitProblem{Message: firstLine(msg), Type: "mismatch", Text: text.String()}
			}
			js.Cases = append(js.Cases, jc)
		}
		out.Suites = append(out.Suites, js)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// firstLine returns s up to its first newline.
func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
