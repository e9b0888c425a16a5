package escaping_test

import (
	"fmt"

	"github.com/vapkit/vapkit/celenv/escaping"
)

func ExampleEscape() {
	for _, name := range []string{"replicas", "namespace", "app.kubernetes.io/name", "a__b", "1st"} {
		escaped, ok := escaping.Escape(name)
		fmt.Printf("%q -> %q %v\n", name, escaped, ok)
	}
	name, ok := escaping.Unescape("app__dot__kubernetes__dot__io__slash__name")
	fmt.Println(name, ok)
	// Output:
	// "replicas" -> "replicas" true
	// "namespace" -> "__namespace__" true
	// "app.kubernetes.io/name" -> "app__dot__kubernetes__dot__io__slash__name" true
	// "a__b" -> "a__underscores__b" true
	// "1st" -> "" false
	// app.kubernetes.io/name true
}
