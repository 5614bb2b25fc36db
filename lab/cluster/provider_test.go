package cluster

import (
	"context"
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

func TestKindProvider(t *testing.T) {
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	kind, _ := Get("kind")
	if ok, why := kind.Available(); ok || !strings.Contains(why, "no kind command") {
		t.Errorf("without kind: Available = %v, %q", ok, why)
	}
	kindCalls := fakeTool(t, bin, "kind", "0")
	fakeTool(t, bin, "docker", "1")
	if ok, why := kind.Available(); ok || !strings.Contains(why, KindNodeImage) {
		t.Errorf("without the node image: Available = %v, %q", ok, why)
	}
	fakeTool(t, bin, "docker", "0")
	if ok, why := kind.Available(); !ok {
		t.Errorf("with kind and the image: not available: %s", why)
	}
	state := t.TempDir()
	c, err := kind.Start(context.Background(), Options{StateDir: state, Images: []string{"/x/driver.tar"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Kubeconfig() != filepath.Join(state, "kubeconfig") {
		t.Errorf("kubeconfig %s", c.Kubeconfig())
	}
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls, _ := os.ReadFile(kindCalls)
	want := "create cluster --config " + state + "/kind-config.yaml --kubeconfig " + state + "/kubeconfig --wait 3m\n" +
		"load image-archive /x/driver.tar --name switchyard-lab\n" +
		"delete cluster --name switchyard-lab\n"
	if string(calls) != want {
		t.Errorf("kind was called with\n%swant\n%s", calls, want)
	}
	cfg, _ := os.ReadFile(filepath.Join(state, "kind-config.yaml"))
	if !strings.Contains(string(cfg), "image: "+KindNodeImage) {
		t.Errorf("kind-config.yaml:\n%s", cfg)
	}
	// A failing kind is an error with its output.
	fakeTool(t, bin, "kind", "1")
	if _, err := kind.Start(context.Background(), Options{StateDir: state}); err == nil {
		t.Error("Start succeeded although kind failed")
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
