package policy

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The API server's warning recorder (k8s.io/apiserver endpoints/filters
// warning.go) limits what reaches the client.
const (
	warningsTotalRunes = 4 * 1024
	warningItemRunes   = 256
)

// warningRecorder reproduces what a client receives from the API server's
// recorder: empty texts are ignored, each distinct text is sent once, texts
// that are not valid header values (control characters, invalid UTF-8) are
// dropped, and past 4096 runes in all every warning is cut to 256 runes.
type warningRecorder struct {
	seen       map[string]bool
	ordered    []string
	out        []string
	written    int
	truncating bool
}

func validWarning(text string) bool {
	if !utf8.ValidString(text) {
		return false
	}
	return !strings.ContainsFunc(text, unicode.IsControl)
}

func truncateRunes(text string) (string, int) {
	n := utf8.RuneCountInString(text)
	if n > warningItemRunes {
		return string([]rune(text)[:warningItemRunes]), warningItemRunes
	}
	return text, n
}

func (r *warningRecorder) add(text string) {
	if text == "" {
		return
	}
	if r.written >= warningsTotalRunes && r.truncating {
		return
	}
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if r.seen[text] {
		return
	}
	r.seen[text] = true
	r.ordered = append(r.ordered, text)
	n := utf8.RuneCountInString(text)
	if r.truncating {
		text, n = truncateRunes(text)
	}
	if !validWarning(text) {
		return
	}
	if r.written+n <= warningsTotalRunes || r.truncating {
		r.written += n
		r.out = append(r.out, text)
		return
	}
	// Over the limit: start again with every warning cut short.
	r.truncating = true
	r.written = 0
	r.out = r.out[:0]
	for _, w := range r.ordered {
		w, n := truncateRunes(w)
		if validWarning(w) {
			r.written += n
			r.out = append(r.out, w)
		}
	}
}
