package gen_test

import (
	"bytes"
	"fmt"

	"github.com/vapkit/vapkit/conformance/gen"
	"github.com/vapkit/vapkit/conformance/upstream"
)

func ExampleGenerate() {
	c := gen.Generate(42)
	again := gen.Generate(42)
	parsed, err := upstream.ParseCase(c.YAML, c.Name)
	fmt.Println(c.Name, bytes.Equal(c.YAML, again.YAML), err == nil && parsed.Request != nil)
	// Output:
	// gen-42 true true
}
