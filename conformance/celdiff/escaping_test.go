package celdiff

import (
	"math/rand/v2"
	"testing"

	apiservercel "k8s.io/apiserver/pkg/cel"

	"github.com/vapkit/vapkit/celenv/escaping"
)

// escapingInputs returns hand-picked names plus pseudo-random strings over
// an alphabet rich in the characters escaping cares about.
func escapingInputs() []string {
	in := []string{
		"", "a", "_", "__", "___", "____", "a.a", "a-a", "a/a", "a__a", "a___a", "1up", "@", "👑", "/👑",
		"if", "namespace", "__if__", "a__if__", "__if____if__", "__dot__", "___dot__", "__dot_x__",
		"__underscores__", "a__underscores__dot__underscores__a", "__int__extra", "__illegal__", "__a b__",
		"app.kubernetes.io/name", "x-kubernetes-list-type", "é", "a b",
	}
	r := rand.New(rand.NewPCG(6, 37))
	const alphabet = "a_b.-/_1 _ifdotdash"
	for range 5000 {
		n := r.IntN(12)
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		in = append(in, string(b))
	}
	words := []string{"__", "dot", "dash", "slash", "underscores", "if", "in", "a", "_", ".", "-"}
	for range 5000 {
		var s string
		for n := r.IntN(6); n >= 0; n-- {
			s += words[r.IntN(len(words))]
		}
		in = append(in, s)
	}
	return in
}

func TestEscapingMatchesUpstream(t *testing.T) {
	for _, s := range escapingInputs() {
		gotE, gotOK := escaping.Escape(s)
		wantE, wantOK := apiservercel.Escape(s)
		if gotE != wantE || gotOK != wantOK {
			t.Errorf("Escape(%q) = %q, %v; upstream %q, %v", s, gotE, gotOK, wantE, wantOK)
		}
		gotU, gotOK := escaping.Unescape(s)
		wantU, wantOK := apiservercel.Unescape(s)
		if gotOK != wantOK || (gotOK && gotU != wantU) {
			t.Errorf("Unescape(%q) = %q, %v; upstream %q, %v", s, gotU, gotOK, wantU, wantOK)
		}
	}
}
