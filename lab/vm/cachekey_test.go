package vm

import "testing"

func TestCacheKeyChangesWithEveryInput(t *testing.T) {
	base := func() keyInputs {
		return keyInputs{
			Kernel: "6.1.0-56-amd64", Packages: []string{"kmod", "udev"}, InitFiles: []string{"init a", "init b"},
			Builder: "1", Prune: []string{"drivers/gpu"}, BootRoots: []string{"ext4"}, SizeBytes: 1 << 30,
		}
	}
	ref := cacheKey(base())
	if ref != cacheKey(base()) {
		t.Fatal("the key is not deterministic")
	}
	changes := []struct {
		name   string
		change func(*keyInputs)
	}{
		{"kernel", func(k *keyInputs) { k.Kernel = "6.1.0-57-amd64" }},
		{"package added", func(k *keyInputs) { k.Packages = append(k.Packages, "samba") }},
		{"init script", func(k *keyInputs) { k.InitFiles[1] = "init b changed" }},
		{"init scripts swapped", func(k *keyInputs) { k.InitFiles = []string{"init b", "init a"} }},
		{"builder", func(k *keyInputs) { k.Builder = "2" }},
		{"prune list", func(k *keyInputs) { k.Prune = nil }},
		{"boot modules", func(k *keyInputs) { k.BootRoots = []string{"ext4", "virtio_blk"} }},
		{"size", func(k *keyInputs) { k.SizeBytes = 2 << 30 }},
	}
	for _, c := range changes {
		in := base()
		c.change(&in)
		if got := cacheKey(in); got == ref {
			t.Errorf("%s: key unchanged (%s)", c.name, got)
		}
	}
	in := base()
	in.Packages = []string{"udev", "kmod"}
	if cacheKey(in) != ref {
		t.Error("the order of the packages changed the key")
	}
}

// The node image is a variant of its own key, and the storage image's
// package list is untouched by it (its cached image stays valid).
func TestNodeImageIsItsOwnVariant(t *testing.T) {
	storage := keyInputs{Kernel: "6.1.0-48-amd64", Packages: Packages, Builder: BuilderVersion}
	node := storage
	node.Packages = append(append([]string(nil), Packages...), NodePackages...)
	if cacheKey(node) == cacheKey(storage) {
		t.Error("the node image has the storage image's key")
	}
	in := map[string]bool{}
	for _, p := range Packages {
		in[p] = true
	}
	for _, p := range NodePackages {
		if in[p] {
			t.Errorf("%s is in both lists: the node variant would not differ by it", p)
		}
	}
	for _, p := range []string{"containerd", "runc", "containernetworking-plugins"} {
		found := false
		for _, n := range NodePackages {
			found = found || n == p
		}
		if !found {
			t.Errorf("NodePackages lacks %s", p)
		}
	}
}
