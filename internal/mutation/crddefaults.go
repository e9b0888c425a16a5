package mutation

// ApplySchemaDefaults applies, in place, the defaults of a CRD version's
// openAPIV3Schema s to obj, as the API server's structural defaulting does
// when it decodes a custom resource (see [TypeConverter.Default]). A schema
// without defaults leaves obj unchanged.
func ApplySchemaDefaults(s map[string]any, obj map[string]any) {
	if d := newDefaulter(s); d != nil {
		d.apply(obj)
	}
}
