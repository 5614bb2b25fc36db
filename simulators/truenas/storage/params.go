package storage

import (
	"encoding/json"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// Handlers receive JSON-RPC positional parameters; these read them.

// positional checks the number of positional parameters.
func positional(params []json.RawMessage, limit int) error {
	if len(params) > limit {
		return middleware.Invalid("", "Too many arguments (expected %d, found %d)", limit, len(params))
	}
	return nil
}

// param returns positional parameter i (nil when absent).
func param(params []json.RawMessage, i int) json.RawMessage {
	if i < len(params) {
		return params[i]
	}
	return nil
}

// stringParam decodes positional parameter i as a non-empty string (an
// id); attr names it in errors.
func stringParam(params []json.RawMessage, i int, attr string) (string, error) { //nolint:unparam // a general positional-parameter reader; today only the first is read
	raw := param(params, i)
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		if len(raw) == 0 {
			return "", middleware.Invalid(attr, "attribute required")
		}
		return "", middleware.Invalid(attr, "Not a string")
	}
	return s, nil
}

// pyRepr is Python's repr() of a str, as f"{x!r}" prints it.
func pyRepr(s string) string {
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
}
