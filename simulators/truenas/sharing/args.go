package sharing

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// Positional arguments of a method call, checked as the middleware checks
// them before the method runs.

// argCount refuses more positional parameters than the method takes
// (accept_params: "Too many arguments (expected N, found M)").
func argCount(params []json.RawMessage, n int) error {
	if len(params) > n {
		return middleware.ValidationErrors{{Attribute: "", Message: fmt.Sprintf("Too many arguments (expected %d, found %d)", n, len(params))}}
	}
	return nil
}

func given(params []json.RawMessage, i int) bool {
	return i < len(params) && len(bytes.TrimSpace(params[i])) > 0
}

// intArg reads a required integer parameter such as an id.
func intArg(d dialect, params []json.RawMessage, i int, name string) (int, error) {
	if !given(params, i) {
		return 0, middleware.Invalid(name, "%s", oldOr(d, "attribute required", "Field required"))
	}
	v, err := middleware.DecodeNumbers(params[i])
	if err != nil {
		return 0, middleware.Invalid(name, "%s", oldOr(d, "Not an integer", typeMsg(kInt)))
	}
	n, ok := toInt(d, v)
	if !ok {
		return 0, middleware.Invalid(name, "%s", oldOr(d, "Not an integer", typeMsg(kInt)))
	}
	return n, nil
}

// boolArg reads an optional boolean parameter (false when absent).
func boolArg(d dialect, params []json.RawMessage, i int, name string) (bool, error) {
	if !given(params, i) || string(bytes.TrimSpace(params[i])) == "null" && !d.pydantic {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(params[i], &b); err != nil {
		return false, middleware.Invalid(name, "%s", oldOr(d, "Not a boolean", typeMsg(kBool)))
	}
	return b, nil
}

// objArg decodes an object parameter against fields. A missing parameter
// is "Field required" for pydantic; the old Dict takes it as {}.
func objArg(d dialect, params []json.RawMessage, i int, fields []field, create bool) (middleware.Row, error) {
	raw := json.RawMessage("{}")
	switch {
	case given(params, i):
		raw = params[i]
	case d.pydantic:
		return nil, middleware.Invalid(d.attr, "Field required")
	}
	row, errs := decode(d, raw, fields, create)
	if len(errs) > 0 {
		return nil, errs
	}
	return row, nil
}

// optionsArg decodes a trailing options object such as
// nvmet.subsys.delete's {"force": bool}; absent means all defaults.
func optionsArg(params []json.RawMessage, i int, fields []field) (middleware.Row, error) {
	if !given(params, i) {
		params = []json.RawMessage{json.RawMessage("{}")}
		i = 0
	}
	return objArg(pydantic("options"), params, i, fields, true)
}
