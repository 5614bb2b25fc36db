package infinia

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
)

// envelope is the body of every answer, success or error.
type envelope struct {
	Title string `json:"title"`
	Data  any    `json:"data"`
}

// apiError is an error answer: {"title": Title, "data": null} with Status.
type apiError struct {
	Status int
	Title  string
}

func errorf(status int, format string, a ...any) *apiError {
	return &apiError{Status: status, Title: fmt.Sprintf(format, a...)}
}

func writeEnvelope(w http.ResponseWriter, status int, title string, data any) {
	body, err := json.Marshal(envelope{Title: title, Data: data})
	if err != nil { // only simulator values are encoded: a bug, answered honestly
		status, body = http.StatusInternalServerError, []byte(`{"title":"encoding the answer failed","data":null}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// maxBody bounds a request body.
const maxBody = 1 << 20

// decodeBody reads a JSON object into v.
func decodeBody(r *http.Request, v any) *apiError {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return errorf(400, "reading the request body: %v", err)
	}
	if len(raw) > maxBody {
		return errorf(413, "request body larger than %d bytes", maxBody)
	}
	if len(raw) == 0 {
		return errorf(400, "a JSON request body is required")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return errorf(400, "%s must be a JSON %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return errorf(400, "invalid JSON body: %v", err)
	}
	return nil
}

// jsonKind names a Go kind the way a JSON client thinks of it.
func jsonKind(k string) string {
	switch k {
	case "int", "int64", "int32":
		return "integer"
	case "map", "struct":
		return "object"
	case "slice":
		return "array"
	}
	return k
}

// forceParam reads ?force=true|false (absent: false).
func forceParam(r *http.Request) (bool, *apiError) {
	v := r.URL.Query().Get("force")
	switch v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, errorf(400, "force must be true or false, not %q", v)
}

// page applies the list headers `from` (the name to start after) and
// `limit` (at most that many; absent or 0: all) to sorted names.
func page(r *http.Request, names []string) ([]string, *apiError) {
	if !sort.StringsAreSorted(names) {
		sort.Strings(names)
	}
	if from := r.Header.Get("from"); from != "" {
		i := sort.SearchStrings(names, from)
		if i < len(names) && names[i] == from {
			i++
		}
		names = names[i:]
	}
	if l := r.Header.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return nil, errorf(400, "limit must be a non-negative integer, not %q", l)
		}
		if n > 0 && n < len(names) {
			names = names[:n]
		}
	}
	return names, nil
}
