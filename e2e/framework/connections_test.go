package framework

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestParseStore(t *testing.T) {
	for spec, ok := range map[string]bool{
		"secret:conns": true, "dir:/mnt/c": true, "dir:relative": false, "secret:": false, "conns": false, "configmap:x": false,
	} {
		if _, _, err := ParseStore(spec); (err == nil) != ok {
			t.Errorf("ParseStore(%q): %v, want ok=%v", spec, err, ok)
		}
	}
}

func TestSecretStoreAddsChangesAndRemovesFiles(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	s, err := NewStore("secret:conns", cs, "sy")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "a", "driver: x\n"); err != nil { // creates the Secret
		t.Fatal(err)
	}
	if err := s.Put(ctx, "b", "driver: y\n"); err != nil {
		t.Fatal(err)
	}
	writes := func() int {
		n := 0
		for _, a := range cs.Actions() {
			if a.GetVerb() == "update" || a.GetVerb() == "create" {
				n++
			}
		}
		return n
	}
	before := writes()
	if err := s.Put(ctx, "a", "driver: x\n"); err != nil { // the same content: no write
		t.Fatal(err)
	}
	if writes() != before {
		t.Error("putting the same content again rewrote the Secret (every kubelet would refresh it)")
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatalf("deleting a missing file: %v", err)
	}
	sec, _ := cs.CoreV1().Secrets("sy").Get(ctx, "conns", metav1.GetOptions{})
	if _, has := sec.Data["a.yaml"]; has || string(sec.Data["b.yaml"]) != "driver: y\n" {
		t.Errorf("Secret data %v: want only b.yaml", sec.Data)
	}
}

func TestDirStore(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "conns")
	s, err := NewStore("dir:"+dir, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "a", "driver: x\n"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.yaml")); err != nil || string(b) != "driver: x\n" {
		t.Fatalf("a.yaml: %q %v", b, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("the folder holds %d entries, want only a.yaml (no temporary file left)", len(ents))
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatalf("deleting a missing file: %v", err)
	}
}
