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

var (
	build    = sync.OnceValues(func() (string, error) { return buildCmd("switchyard", "E2E_SWITCHYARD_BIN") })
	buildLab = sync.OnceValues(func() (string, error) { return buildCmd("switchyard-lab", "E2E_SWITCHYARD_LAB_BIN") })
)

// buildCmd builds cmd/<name> of the parent module (the directory above
// this module's go.mod, found from the test's package directory, which
// may be nested: e2e/backends, e2e/cmd/e2e-lab), unless env names a
// binary.
func buildCmd(name, env string) (string, error) {
	if b := os.Getenv(env); b != "" {
		return b, nil
	}
	dir, err := os.MkdirTemp("", "e2e-"+name+"-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	root, err := parentModule()
	if err != nil {
		return "", err
	}
	out, err := exec.Command("go", "-C", root, "build", "-o", bin, "./cmd/"+name).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", name, err, out)
	}
	return bin, nil
}

// parentModule is the directory above the nearest go.mod upwards of the
// working directory (this module's root).
func parentModule() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Dir(d), nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", fmt.Errorf("no go.mod above the test's directory")
		}
		d = up
	}
}

// Lab is switchyard-lab, built like Path (E2E_SWITCHYARD_LAB_BIN).
func Lab(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds switchyard-lab (-short)")
	}
	bin, err := buildLab()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

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
