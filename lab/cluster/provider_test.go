package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProviders(t *testing.T) {
	for _, name := range []string{"local", "kind"} {
		p, err := Get(name)
		if err != nil || p.Name() != name {
			t.Fatalf("Get(%q) = %v, %v", name, p, err)
		}
	}
	if _, err := Get("minikube"); err == nil || !strings.Contains(err.Error(), "kind, local") {
		t.Errorf("Get(minikube) error %v does not list the providers", err)
	}
}

// fakeTool puts a shell script named name first in PATH; it appends its
// arguments to the returned file and exits with code.
func fakeTool(t *testing.T, dir, name, code string) string {
	t.Helper()
	record := filepath.Join(dir, name+".calls")
	script := "#!/bin/sh\necho \"$@\" >> " + record + "\nexit " + code + "\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return record
}

func TestVMNodeWithoutTheVMNodeFiles(t *testing.T) {
	if newVMNode != nil {
		t.Skip("this build has the storage VM node")
	}
	if _, err := VMNode(Options{}); err == nil || !strings.Contains(err.Error(), "vmnode") {
		t.Errorf("VMNode without vmnode*.go: %v", err)
	}
}
