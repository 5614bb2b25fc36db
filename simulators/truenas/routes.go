package truenas

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// ServeHTTP routes a request to its transport by path, as the release
// simulated does.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/api/v2.0" || strings.HasPrefix(p, "/api/v2.0/"):
		s.serveREST(w, r)
	case p == "/api/versions" && s.version.AtLeast(25, 4, 0):
		if r.Method != http.MethodGet {
			plainError(w, http.StatusMethodNotAllowed)
			return
		}
		writeJSON(w, http.StatusOK, s.apiVersions())
	case p == "/api/current" || strings.HasPrefix(p, "/api/v"):
		s.serveJSONRPC(w, r)
	case p == "/websocket":
		s.serveLegacy(w, r)
	default:
		plainError(w, http.StatusNotFound)
	}
}

// apiVersions are the versioned JSON-RPC endpoints (/api/<name>) of this
// release: every patch level of each release from 25.04 up to this one,
// newest last, as GET /api/versions lists them.
func (s *Server) apiVersions() []string {
	var out []string
	for _, rel := range []struct{ year, month, lastPatch int }{{25, 4, 2}, {25, 10, 1}, {26, 4, 0}} {
		if !s.version.AtLeast(rel.year, rel.month, 0) {
			break
		}
		last := rel.lastPatch
		if s.version.Year == rel.year && s.version.Month == rel.month {
			last = s.version.Patch
		}
		for p := 0; p <= last; p++ {
			out = append(out, "v"+versionString(rel.year, rel.month, p))
		}
	}
	return out
}

func versionString(year, month, patch int) string {
	return fmt.Sprintf("%d.%02d.%d", year, month, patch)
}

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := getAnswerBuffer()
	defer putAnswerBuffer(buf)
	data, err := middleware.AppendEncoded(*buf, v)
	if err != nil {
		status = http.StatusInternalServerError
		data, _ = json.Marshal(map[string]any{"message": "encoding the result: " + err.Error()})
	} else {
		*buf = data
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}

// plainError answers like aiohttp does for routing errors: "404: Not Found".
func plainError(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "%d: %s", status, http.StatusText(status))
}
