package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestErrorText(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{Endpoint: "https://nas:443", Method: "pool.dataset.create", Code: -32602, Message: "Invalid params",
			Fields: []FieldError{{Attribute: "pool_dataset_create.volsize", Message: "Volume size should be a multiple of volume block size", Errno: 22}}},
			"truenas https://nas:443: pool.dataset.create: pool_dataset_create.volsize: Volume size should be a multiple of volume block size"},
		{&Error{Endpoint: "http://nas:80", Method: "pool.dataset.delete", HTTPStatus: 422, Errno: 2, Errname: "ENOENT", Message: "tank/x does not exist"},
			"truenas http://nas:80: pool.dataset.delete: [ENOENT] tank/x does not exist"},
		{&Error{Endpoint: "http://nas:80", Method: "x.y", Code: -32601, Message: "Method does not exist"},
			"truenas http://nas:80: x.y: Method does not exist (JSON-RPC -32601)"},
		{&Error{Endpoint: "http://nas:80", Method: "x.y", HTTPStatus: 500, Message: "boom"},
			"truenas http://nas:80: x.y: boom (HTTP 500)"},
		{&Error{Method: "a.b", Fields: []FieldError{{Message: "whole"}, {Attribute: "a.b.c", Message: "bad"}}},
			"truenas a.b: whole; a.b.c: bad"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}

func TestClassifiers(t *testing.T) {
	wrapped := func(e *Error) error { return fmt.Errorf("backend: %w", e) }
	tests := []struct {
		name                      string
		err                       error
		notFound, exists, invalid bool
	}{
		{"404", &Error{HTTPStatus: 404, Message: "tank/x not found"}, true, false, false},
		{"missing route", &Error{HTTPStatus: 404, noRoute: true, Message: "no such REST endpoint"}, false, false, false},
		{"ENOENT errno", wrapped(&Error{Code: -32001, Errno: 2}), true, false, false},
		{"ENOENT name", &Error{Code: -32001, Errname: "ENOENT"}, true, false, false},
		{"does not exist", &Error{HTTPStatus: 422, Message: "Dataset tank/x does not exist"}, true, false, false},
		{"InstanceNotFound", &Error{Code: -32602, Fields: []FieldError{{Message: "Pool dataset tank/x does not exist", Errno: 2}}}, true, false, true},
		{"EEXIST", &Error{Code: -32001, Errno: 17}, false, true, false},
		{"already exists", &Error{Code: -32602, Fields: []FieldError{{Attribute: "x.name", Message: "Target name already exists"}}}, false, true, true},
		{"validation", &Error{HTTPStatus: 422, Fields: []FieldError{{Attribute: "x.volsize", Message: "bad"}}}, false, false, true},
		{"other", &Error{Code: -32001, Errno: 16, Message: "busy"}, false, false, false},
		{"not an Error", errors.New("does not exist"), false, false, false},
		{"nil", nil, false, false, false},
	}
	for _, tt := range tests {
		if got := IsNotFound(tt.err); got != tt.notFound {
			t.Errorf("%s: IsNotFound = %v", tt.name, got)
		}
		if got := IsExists(tt.err); got != tt.exists {
			t.Errorf("%s: IsExists = %v", tt.name, got)
		}
		if got := IsValidation(tt.err); got != tt.invalid {
			t.Errorf("%s: IsValidation = %v", tt.name, got)
		}
	}
}

func TestRPCErrorParsing(t *testing.T) {
	tests := []struct {
		wire string
		want Error
	}{
		{`{"code":-32602,"message":"Invalid params","data":{"error":22,"errname":"EINVAL","reason":"[EINVAL] pool_dataset_create.volsize: Volume size should be a multiple of volume block size\n","trace":null,"extra":[["pool_dataset_create.volsize","Volume size should be a multiple of volume block size",22]]}}`,
			Error{Method: "m", Code: -32602, Errno: 22, Errname: "EINVAL", Message: "Invalid params",
				Fields: []FieldError{{"pool_dataset_create.volsize", "Volume size should be a multiple of volume block size", 22}}}},
		{`{"code":-32602,"message":"Invalid params","data":{"error":22,"errname":"EINVAL","reason":"[ENOENT] None: tank/x does not exist","extra":[[null,"tank/x does not exist",2]]}}`,
			Error{Method: "m", Code: -32602, Errno: 22, Errname: "EINVAL", Message: "Invalid params",
				Fields: []FieldError{{"", "tank/x does not exist", 2}}}},
		{`{"code":-32001,"message":"Method call error","data":{"error":17,"errname":"EEXIST","reason":"[EEXIST] Target name already exists","extra":null}}`,
			Error{Method: "m", Code: -32001, Errno: 17, Errname: "EEXIST", Message: "Target name already exists"}},
		{`{"code":-32001,"message":"Method call error","data":{"error":207,"errname":"ENOTAUTHENTICATED","reason":"[ENOTAUTHENTICATED] Not authenticated"}}`,
			Error{Method: "m", Code: -32001, Errno: 207, Errname: "ENOTAUTHENTICATED", Message: "Not authenticated"}},
		{`{"code":-32000,"message":"Maximum number of concurrent calls (20) has exceeded"}`,
			Error{Method: "m", Code: -32000, Message: "Maximum number of concurrent calls (20) has exceeded"}},
		{`{"code":-32601,"message":"Method does not exist"}`,
			Error{Method: "m", Code: -32601, Message: "Method does not exist"}},
	}
	for _, tt := range tests {
		var w wireError
		if err := json.Unmarshal([]byte(tt.wire), &w); err != nil {
			t.Fatal(err)
		}
		got := rpcError("m", &w)
		if fmt.Sprint(*got) != fmt.Sprint(tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.wire, *got, tt.want)
		}
	}
	var w wireError
	_ = json.Unmarshal([]byte(`{"code":-32001,"message":"Method call error","data":{"error":207,"errname":"ENOTAUTHENTICATED","reason":"x"}}`), &w)
	if !isNotAuthenticated(rpcError("m", &w)) {
		t.Error("ENOTAUTHENTICATED not recognised")
	}
}

func TestRESTStatusParsing(t *testing.T) {
	c := newClient(t, Config{Host: "nas", Username: "root", Password: "pw"})
	r := c.rest
	rr := restRequest{Verb: "POST", Path: "/pool/dataset"}
	tests := []struct {
		name   string
		status int
		body   string
		check  func(error) bool
		want   string
	}{
		{"validation", 422, `{"pool_dataset_create.volsize":[{"message":"Volume size should be a multiple of volume block size","errno":22}],"pool_dataset_create.name":[{"message":"Parent dataset does not exist","errno":2}]}`,
			IsValidation, "pool.dataset.create: pool_dataset_create.name: Parent dataset does not exist; pool_dataset_create.volsize: Volume size should be a multiple of volume block size"},
		{"call error", 422, `{"message":"Target name already exists","errno":17}`, IsExists, "pool.dataset.create: [EEXIST] Target name already exists"},
		{"instance", 404, `{"message":"tank/x not found"}`, IsNotFound, "tank/x not found (HTTP 404)"},
		{"empty 404", 404, `{"message":""}`, IsNotFound, "pool.dataset.create: the object does not exist (HTTP 404)"},
		{"whole-call validation", 422, `{"null":[{"message":"PoolDataset tank/a does not exist","errno":2}]}`, IsNotFound, "pool.dataset.create: PoolDataset tank/a does not exist"},
		{"no route", 404, `404: Not Found`, func(err error) bool { return !IsNotFound(err) && isMethodNotFound(err) }, "no such REST endpoint POST /api/v2.0/pool/dataset"},
		{"server", 500, `{"message":"boom","traceback":"Traceback ..."}`, func(err error) bool { return !strings.Contains(err.Error(), "Traceback") }, "boom (HTTP 500)"},
		{"bad request", 400, `{"message":"Endpoint accepts multiple params, object/dict expected."}`, func(err error) bool { return true }, "object/dict expected. (HTTP 400)"},
		{"forbidden", 403, ``, func(err error) bool { return true }, "not allowed to make this call (HTTP 403)"},
		{"proxy", http.StatusBadGateway, `<html>bad gateway</html>`, func(err error) bool { return errors.Is(err, ErrUnreachable) }, "HTTP 502"},
		{"unauthorized", 401, `Bad username or password`, func(err error) bool { return errors.Is(err, ErrAuth) }, `login as "root" was refused (Bad username or password)`},
	}
	for _, tt := range tests {
		err := r.statusError("pool.dataset.create", rr, tt.status, []byte(tt.body))
		if !tt.check(err) {
			t.Errorf("%s: classification failed for %v", tt.name, err)
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %q does not contain %q", tt.name, err, tt.want)
		}
		if !strings.HasPrefix(err.Error(), "truenas http://nas:80: ") {
			t.Errorf("%s: %q does not name the endpoint", tt.name, err)
		}
	}
}
