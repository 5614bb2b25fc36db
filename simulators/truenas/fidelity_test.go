package truenas

// The tests named TestFidelity* each pin one row of issue 15: a request
// exactly as a TrueNAS client other than switchyard's sends it (democratic-
// csi over REST, the Go drivers over JSON-RPC), and the answer the real
// middleware gives it (its plugins and API models are the reference).
// These are their helpers.

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/switchyard-csi/switchyard/simulators/zfsssh"
)

// restClient is how a test talks REST to s (TLS or not) as root.
func restClient(t *testing.T, s *Server) (*http.Client, string) {
	t.Helper()
	if s.TLSURL() != "" {
		return tlsClient(t, s), s.TLSURL()
	}
	return nil, s.URL()
}

// restJSON sends a REST request and decodes a 200 answer into v.
func restJSON(t *testing.T, s *Server, verb, path, body string, v any) {
	t.Helper()
	hc, base := restClient(t, s)
	code, data := rest(t, hc, base, verb, path, body, rootAuth)
	if code != http.StatusOK {
		t.Fatalf("%s %s: %d %s", verb, path, code, data)
	}
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("%s %s: %s: %v", verb, path, data, err)
		}
	}
}

// jsonHas reports whether a REST validation error body has attr with a
// message containing msg.
func jsonHas(body []byte, attr, msg string) bool {
	var m map[string][]struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	for _, e := range m[attr] {
		if strings.Contains(e.Message, msg) {
			return true
		}
	}
	return false
}

func reflectEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func fmtAny(v any) string { b, _ := json.Marshal(v); return string(b) }

// sshRun starts s's SSH endpoint and returns a function running one
// command in a new session: its combined output and exit status.
func sshRun(t *testing.T, s *Server) func(cmd string) (string, int) {
	t.Helper()
	addr, err := s.StartSSH("127.0.0.1:0", map[string]zfsssh.User{"root": {Password: "pw"}})
	if err != nil {
		t.Fatal(err)
	}
	client, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{User: "root", Auth: []ssh.AuthMethod{ssh.Password("pw")},
		HostKeyCallback: ssh.InsecureIgnoreHostKey()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return func(cmd string) (string, int) {
		t.Helper()
		sess, err := client.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		out, err := sess.CombinedOutput(cmd)
		var exit *ssh.ExitError
		switch {
		case err == nil:
			return string(out), 0
		case errors.As(err, &exit):
			return string(out), exit.ExitStatus()
		}
		t.Fatalf("%s: %v", cmd, err)
		return "", -1
	}
}
