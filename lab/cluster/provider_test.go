package cluster

import (
	"context"
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
	kind, _ := Get("kind")
	if ok, why := kind.Available(); ok || why == "" {
		t.Errorf("kind Available = %v, %q: its Start is not written, so it must say why not", ok, why)
	}
	if _, err := kind.Start(context.Background(), Options{}); err == nil {
		t.Error("kind Start succeeded without an implementation")
	}
}

func TestVMNodeWithoutTheVMNodeFiles(t *testing.T) {
	if newVMNode != nil {
		t.Skip("this build has the storage VM node")
	}
	if _, err := VMNode(Options{}); err == nil || !strings.Contains(err.Error(), "vmnode") {
		t.Errorf("VMNode without vmnode*.go: %v", err)
	}
}
