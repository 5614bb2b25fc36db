package cluster

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// copyFile copies src to dst, making dst's directory.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestEnsureKubeCacheKey runs scripts/ensure-kube.sh --print-dir on a copy
// of the checkout's build inputs: the key follows go.mod and go.sum and
// nothing else of the module, and a built directory is found again.
func TestEnsureKubeCacheKey(t *testing.T) {
	if _, err := lookGo(); err != nil {
		t.Skip(err)
	}
	repo, err := FindRepo("")
	if err != nil {
		t.Fatal(err)
	}
	tree := t.TempDir()
	copyFile(t, filepath.Join(repo, "scripts/ensure-kube.sh"), filepath.Join(tree, "scripts/ensure-kube.sh"))
	for _, m := range []string{"kubebuild", "sidecarbuild"} {
		for _, f := range []string{"go.mod", "go.sum", "tools.go"} {
			copyFile(t, filepath.Join(repo, "lab/cluster", m, f), filepath.Join(tree, "lab/cluster", m, f))
		}
	}
	cache := t.TempDir()
	t.Setenv("SWITCHYARD_LAB_CACHE", cache)
	ctx := context.Background()
	dir := func(arg string) (string, bool) {
		t.Helper()
		d, err := ensureScript(ctx, tree, arg)
		if err != nil && !errors.Is(err, errNotBuilt) {
			t.Fatal(err)
		}
		return d, err == nil
	}
	kube, built := dir("--print-dir")
	if built {
		t.Fatal("an empty cache reports the binaries as built")
	}
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(cache) + `/kube/[0-9a-f]{20}/bin$`).MatchString(kube) {
		t.Fatalf("kube dir %q is not <cache>/kube/<key>/bin", kube)
	}
	side, _ := dir("--sidecars-dir")
	if !strings.HasPrefix(side, cache+"/kube-sidecars/") {
		t.Errorf("sidecars dir %q", side)
	}
	if again, _ := dir("--print-dir"); again != kube {
		t.Errorf("the key changed between two runs: %s then %s", kube, again)
	}
	// tools.go only keeps go.mod tidy: the packages built are the script's.
	f, _ := os.OpenFile(filepath.Join(tree, "lab/cluster/kubebuild/tools.go"), os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString("\n// a comment\n")
	f.Close()
	if again, _ := dir("--print-dir"); again != kube {
		t.Errorf("a comment in tools.go changed the key")
	}
	f, _ = os.OpenFile(filepath.Join(tree, "lab/cluster/kubebuild/go.sum"), os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString("example.com/x v1.0.0 h1:AAAA=\n")
	f.Close()
	changed, _ := dir("--print-dir")
	if changed == kube {
		t.Error("a changed go.sum kept the key")
	}
	if s2, _ := dir("--sidecars-dir"); s2 != side {
		t.Error("the kube module's go.sum changed the sidecars' key")
	}
	// A built directory (what the script renames into place) is found.
	for _, b := range KubeBinaries {
		copyFile(t, "/bin/true", filepath.Join(changed, b))
	}
	if d, built := dir("--print-dir"); !built || d != changed {
		t.Errorf("--print-dir after the build = %s, built %v", d, built)
	}
	if out, err := exec.Command(filepath.Join(tree, "scripts/ensure-kube.sh"), "--bogus").CombinedOutput(); err == nil {
		t.Errorf("an unknown option succeeded: %s", out)
	}
}
