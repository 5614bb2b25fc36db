// Package driverbin gives this module's unit tests the switchyard binary
// of the parent module, built once per test process: the tests check the
// driver as a user runs it, without importing it (the e2e module adds no
// dependency to the driver's, nor the driver's to it).
package driverbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var build = sync.OnceValues(func() (string, error) {
	if b := os.Getenv("E2E_SWITCHYARD_BIN"); b != "" {
		return b, nil
	}
	dir, err := os.MkdirTemp("", "e2e-switchyard-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "switchyard")
	// The module root is two levels up from any package of this module
	// that calls Path (e2e/<pkg>).
	out, err := exec.Command("go", "-C", "../..", "build", "-o", bin, "./cmd/switchyard").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building switchyard: %v\n%s", err, out)
	}
	return bin, nil
})

// Path is the binary: E2E_SWITCHYARD_BIN, else one built from ../../cmd/switchyard.
// Skipped with -short.
func Path(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the driver (-short)")
	}
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
