package containers

import (
	"os/exec"
	"strings"
)

// runtimeGOROOT asks the standard location's go for its GOROOT; the
// fallback when neither $GO nor PATH has one.
func runtimeGOROOT() string {
	out, err := exec.Command("/usr/local/go/bin/go", "env", "GOROOT").Output()
	if err != nil {
		return "/usr/local/go"
	}
	return strings.TrimSpace(string(out))
}
