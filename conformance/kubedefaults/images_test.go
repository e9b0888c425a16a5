package kubedefaults

import (
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vapkit/vapkit/internal/builtin/defaulting"
)

// Pieces of image references that randomImage joins: each piece is
// valid most of the time and invalid (or an edge case) otherwise.
var (
	imageDomains = [2][]string{
		{"", "", "", "localhost/", "localhost:5000/", "index.docker.io/", "docker.io/", "registry.example.com/",
			"registry.example.com:5000/", "team/", "[::1]:5000/", "127.0.0.1:80/", "a.b-c.d/"},
		{"Example.com/", "EXAMPLE/", "[fe80::1]/", "-bad.com/", "x:y/", "Team/"},
	}
	imagePaths = [2][]string{
		{"nginx", "library/nginx", "team/app", "a/b/c", "my_app", "my__app", "my-app", "my--app", "my.app", "a",
			strings.Repeat("a", 240)},
		{"Nginx", "App", "-app", "app-", "", "UPPER", "my___app", "my_.app", strings.Repeat("a", 256),
			"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
	}
	imageTags = [2][]string{
		{"", "", "", ":latest", ":latest", ":1.25", ":LATEST", ":v1.0-rc_1", ":" + strings.Repeat("t", 128)},
		{":", ":.bad", ":-bad", ":" + strings.Repeat("t", 129), ":latest:1"},
	}
	imageDigests = [2][]string{
		{"", "", "", "", "@sha256:" + strings.Repeat("a", 64), "@sha512:" + strings.Repeat("0", 128),
			"@sha384:" + strings.Repeat("1", 96)},
		{"@sha256:" + strings.Repeat("a", 63), "@sha256:" + strings.Repeat("A", 64), "@md5:" + strings.Repeat("b", 32),
			"@sha256:" + strings.Repeat("a", 31), "@SHA256:" + strings.Repeat("a", 64),
			"@sha256+b64:" + strings.Repeat("a", 64), "@", "@sha256:"},
	}
)

// randomImage joins random pieces into an image reference, now and then
// altering one character.
func randomImage(r *rand.Rand) string {
	pick := func(pieces [2][]string) string {
		s := pieces[0]
		if r.IntN(8) == 0 {
			s = pieces[1]
		}
		return s[r.IntN(len(s))]
	}
	image := pick(imageDomains) + pick(imagePaths) + pick(imageTags) + pick(imageDigests)
	if image != "" && r.IntN(10) == 0 {
		b := []byte(image)
		b[r.IntN(len(b))] = ":/@.-_Aa0 "[r.IntN(10)]
		image = string(b)
	}
	return image
}

// TestPullPolicyMatchesKube compares the pull policy each side gives a
// container and an image volume without one, over many image references.
func TestPullPolicyMatchesKube(t *testing.T) {
	kube, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	vapkit := runtime.NewScheme()
	defaulting.Register(vapkit)
	r := rand.New(rand.NewPCG(37, 2))
	n := 20 * objectsPerKind()
	counts := map[corev1.PullPolicy]int{}
	for i := range n {
		image := randomImage(r)
		if i < len(fixedImages) {
			image = fixedImages[i]
		}
		pod := &corev1.Pod{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: image}},
			Volumes:    []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: image}}}},
		}}
		want, got := pod.DeepCopy(), pod.DeepCopy()
		kube.Default(want)
		vapkit.Default(got)
		w, g := want.Spec.Containers[0].ImagePullPolicy, got.Spec.Containers[0].ImagePullPolicy
		if w != g {
			t.Errorf("image %q: kube's pull policy is %s, vapkit's %s", image, w, g)
		}
		if w, g := want.Spec.Volumes[0].Image.PullPolicy, got.Spec.Volumes[0].Image.PullPolicy; w != g {
			t.Errorf("image volume %q: kube's pull policy is %s, vapkit's %s", image, w, g)
		}
		counts[w]++
	}
	// Both answers must be common, or the comparison says little.
	if counts[corev1.PullAlways] < n/10 || counts[corev1.PullIfNotPresent] < n/10 {
		t.Errorf("pull policies drawn: %v of %d", counts, n)
	}
	t.Logf("%d image references compared: %v", n, counts)
}

// fixedImages are compared first, every run.
var fixedImages = []string{
	"", "nginx", "nginx:latest", "nginx:1.25", "nginx@sha256:" + strings.Repeat("a", 64),
	"nginx:latest@sha256:" + strings.Repeat("a", 64), "NGINX", "localhost/app", "registry.example.com:5000/team/app",
	"Example.com/app:latest", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
}
