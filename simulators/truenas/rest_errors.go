package truenas

import (
	"net/http"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// restError renders an error as restful.py does: CallError 422
// {"message","errno"}; validation errors 422 {"<attribute>":
// [{"message","errno"}]} (an InstanceNotFound's attribute is None, which
// JSON writes "null"); no match on GET /ns/id/<id> 404; anything else 500
// {"message","traceback"}.
func restError(err error, getByID bool) (int, any) {
	c := classify(err)
	switch c.kind {
	case kindCall:
		if getByID && c.call.Errno == middleware.ENOENT && c.call.Message == "MatchNotFound()" {
			// middlewared's MatchNotFound carries no message.
			return http.StatusNotFound, map[string]any{"message": ""}
		}
		return http.StatusUnprocessableEntity, map[string]any{"message": c.call.Message, "errno": c.call.Errno}
	case kindNotFound:
		if getByID {
			return http.StatusNotFound, map[string]any{"message": c.notFound.Message}
		}
		return http.StatusUnprocessableEntity, map[string]any{"null": []any{map[string]any{"message": c.notFound.Message, "errno": middleware.ENOENT}}}
	case kindValidation:
		out := map[string][]any{}
		for _, e := range c.invalid {
			out[e.Attribute] = append(out[e.Attribute], map[string]any{"message": e.Message, "errno": errnoOf(e)})
		}
		return http.StatusUnprocessableEntity, out
	case kindNoMethod:
		return http.StatusNotFound, map[string]any{"message": c.call.Message}
	}
	return http.StatusInternalServerError, map[string]any{"message": err.Error(), "traceback": internalTrace(err)["formatted"]}
}
