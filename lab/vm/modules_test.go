package vm

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fakeDep mimics modules.dep: each module lists all of its dependencies.
const fakeDep = `kernel/drivers/virtio/virtio_ring.ko:
kernel/drivers/virtio/virtio.ko: kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/virtio/virtio_pci_modern_dev.ko:
kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_pci_modern_dev.ko kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/block/virtio_blk.ko: kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko
kernel/crypto/crc32c_generic.ko:
kernel/lib/crc16.ko:
kernel/fs/mbcache.ko:
kernel/fs/jbd2/jbd2.ko:
kernel/fs/ext4/ext4.ko: kernel/lib/crc16.ko kernel/fs/mbcache.ko kernel/fs/jbd2/jbd2.ko
kernel/drivers/nvme/target/nvmet-tcp.ko: kernel/drivers/nvme/target/nvmet.ko
kernel/drivers/nvme/target/nvmet.ko:
`

func TestBootModules(t *testing.T) {
	tests := []struct {
		name    string
		dep     string
		builtin string
		roots   []string
		want    []string
		wantErr string
	}{
		{
			name:  "the boot set in dependency order",
			dep:   fakeDep,
			roots: []string{"virtio_pci", "virtio_blk", "crc32c_generic", "ext4"},
			want: []string{
				"kernel/drivers/virtio/virtio_pci_modern_dev.ko", "kernel/drivers/virtio/virtio_ring.ko",
				"kernel/drivers/virtio/virtio.ko", "kernel/drivers/virtio/virtio_pci.ko",
				"kernel/drivers/block/virtio_blk.ko", "kernel/crypto/crc32c_generic.ko",
				"kernel/lib/crc16.ko", "kernel/fs/mbcache.ko", "kernel/fs/jbd2/jbd2.ko", "kernel/fs/ext4/ext4.ko",
			},
		},
		{
			name:  "dashes and underscores name the same module",
			dep:   fakeDep,
			roots: []string{"nvmet_tcp"},
			want:  []string{"kernel/drivers/nvme/target/nvmet.ko", "kernel/drivers/nvme/target/nvmet-tcp.ko"},
		},
		{
			name:    "a built-in root needs nothing",
			dep:     "kernel/fs/ext4/ext4.ko:\n",
			builtin: "kernel/drivers/virtio/virtio_pci.ko\nkernel/drivers/block/virtio_blk.ko\n",
			roots:   []string{"virtio_pci", "virtio_blk", "ext4"},
			want:    []string{"kernel/fs/ext4/ext4.ko"},
		},
		{
			name:  "compressed modules keep their file names",
			dep:   "kernel/fs/ext4/ext4.ko.xz: kernel/fs/jbd2/jbd2.ko.xz\nkernel/fs/jbd2/jbd2.ko.xz:\n",
			roots: []string{"ext4"},
			want:  []string{"kernel/fs/jbd2/jbd2.ko.xz", "kernel/fs/ext4/ext4.ko.xz"},
		},
		{
			name:    "a missing root is named",
			dep:     fakeDep,
			roots:   []string{"ext4", "virtio_scsi"},
			wantErr: "module virtio_scsi (needed by boot) is neither in modules.dep nor built in",
		},
		{
			name:    "a missing dependency names the chain",
			dep:     "kernel/fs/ext4/ext4.ko: kernel/fs/jbd2/jbd2.ko\n",
			roots:   []string{"ext4"},
			wantErr: "module jbd2 (needed by boot -> ext4)",
		},
		{
			name:    "a cycle is an error",
			dep:     "a.ko: b.ko\nb.ko: a.ko\n",
			roots:   []string{"a"},
			wantErr: "cycle: boot -> a -> b -> a",
		},
		{
			name:    "a malformed line is an error",
			dep:     "kernel/fs/ext4/ext4.ko\n",
			roots:   []string{"ext4"},
			wantErr: "modules.dep line 1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := bootModules(strings.NewReader(tt.dep), strings.NewReader(tt.builtin), tt.roots)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestCopyModulesPrunes(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	files := map[string]bool{ // path -> kept
		"kernel/drivers/nvme/target/nvmet.ko":              true,
		"kernel/drivers/net/virtio_net.ko":                 true,
		"kernel/drivers/net/ethernet/intel/e1000/e1000.ko": false,
		"kernel/drivers/gpu/drm/drm.ko":                    false,
		"kernel/sound/core/snd.ko":                         false,
		"kernel/drivers/gpus/not-pruned.ko":                true, // a prefix of a pruned name is not pruned
		"modules.builtin":                                  true,
	}
	for f := range files {
		p := filepath.Join(src, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/usr/src/linux-headers", filepath.Join(src, "build")); err != nil {
		t.Fatal(err)
	}
	if err := copyModules(src, dst); err != nil {
		t.Fatal(err)
	}
	for f, kept := range files {
		b, err := os.ReadFile(filepath.Join(dst, f))
		switch {
		case kept && (err != nil || string(b) != f):
			t.Errorf("%s: not copied intact (%q, %v)", f, b, err)
		case !kept && err == nil:
			t.Errorf("%s: copied, want it pruned", f)
		}
	}
	if _, err := os.Lstat(filepath.Join(dst, "build")); err == nil {
		t.Error("the build symlink into the kernel headers was copied")
	}
}
