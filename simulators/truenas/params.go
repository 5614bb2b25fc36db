package truenas

import (
	"encoding/json"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// decodeParams decodes the first len(dst) positional parameters into dst
// (names[i] names dst[i] in validation errors, prefixed by schema, e.g.
// "auth_login.username"). Missing parameters are errors.
func decodeParams(p []json.RawMessage, schema string, names []string, dst ...any) error {
	var errs middleware.ValidationErrors
	for i, d := range dst {
		attr := schema + "." + names[i]
		if i >= len(p) {
			errs = append(errs, middleware.ValidationError{Attribute: attr, Message: "Field required"})
			continue
		}
		if err := json.Unmarshal(p[i], d); err != nil {
			errs = append(errs, middleware.ValidationError{Attribute: attr, Message: "Invalid value: " + err.Error()})
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}
