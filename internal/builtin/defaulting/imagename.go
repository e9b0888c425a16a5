package defaulting

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// pullPolicyFor is the image pull policy the API server gives a container
// (or an image volume) that sets none: Always when the image reference
// names the tag latest or no tag and no digest, IfNotPresent otherwise,
// including when the reference does not parse (the server ignores that
// error and leaves refusing the image to validation).
//
// The parsing is that of container image references as kubelet and the API
// server read them (github.com/distribution/reference's normalized names):
// a name without a registry is a Docker Hub name, names must be lowercase,
// and a digest must be of a known algorithm with its exact hex length.
func pullPolicyFor(image string) corev1.PullPolicy {
	tag, digest, ok := parseImageReference(image)
	if ok && (tag == "latest" || tag == "" && digest == "") {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// The grammar of an image reference: [host[:port]/]path[:tag][@digest].
const (
	refPathComponent = `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
	refDomainLabel   = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	refHost          = `(?:` + refDomainLabel + `(?:\.` + refDomainLabel + `)*|\[(?:[a-fA-F0-9:]+)\])`
	refDomain        = refHost + `(?::[0-9]+)?`
	refPath          = refPathComponent + `(?:/` + refPathComponent + `)*`
	refTag           = `[\w][\w.-]{0,127}`
	refDigest        = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}`
)

var (
	referenceRE = regexp.MustCompile(`^((?:` + refDomain + `/)?` + refPath + `)(?::(` + refTag + `))?(?:@(` + refDigest + `))?$`)
	nameRE      = regexp.MustCompile(`^(?:(` + refDomain + `)/)?(` + refPath + `)$`)
	hex64RE     = regexp.MustCompile(`^[a-f0-9]{64}$`)
	lowerHexRE  = regexp.MustCompile(`^[a-f0-9]+$`)
)

// digestHexLength is the hex length of each digest algorithm the server
// knows.
var digestHexLength = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}

// parseImageReference returns the tag and digest of image, and whether it
// is a valid reference at all.
func parseImageReference(image string) (tag, digest string, ok bool) {
	if hex64RE.MatchString(image) {
		return "", "", false
	}
	domain, remainder := splitImageDomain(image)
	repository, _, _ := strings.Cut(remainder, ":")
	if strings.ToLower(repository) != repository {
		return "", "", false
	}
	m := referenceRE.FindStringSubmatch(domain + "/" + remainder)
	if m == nil {
		return "", "", false
	}
	if n := nameRE.FindStringSubmatch(m[1]); n != nil && len(n[2]) > 255 {
		return "", "", false
	}
	if m[3] != "" {
		algorithm, hex, _ := strings.Cut(m[3], ":")
		if length, known := digestHexLength[algorithm]; !known || len(hex) != length || !lowerHexRE.MatchString(hex) {
			return "", "", false
		}
	}
	return m[2], m[3], true
}

// splitImageDomain splits image into its registry and the rest, filling in
// Docker Hub (and its library/ prefix) where the image names no registry.
func splitImageDomain(image string) (domain, remainder string) {
	const hub = "docker.io"
	first, rest, found := strings.Cut(image, "/")
	switch {
	case !found:
		return hub, "library/" + image
	case first == "localhost":
		domain, remainder = first, rest
	case first == "index.docker.io":
		domain, remainder = hub, rest
	case strings.ContainsAny(first, ".:"), strings.ToLower(first) != first:
		domain, remainder = first, rest
	default:
		domain, remainder = hub, image
	}
	if domain == hub && !strings.Contains(remainder, "/") {
		remainder = "library/" + remainder
	}
	return domain, remainder
}
