package cluster

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// No registry is reachable from the lab machines: images are
// docker-archive tarballs (what `docker save` writes) imported into the
// node's containerd, and pods use them with imagePullPolicy: Never.

// PauseImageName is the sandbox image of the lab's nodes.
const PauseImageName = "switchyard.local/lab/pause:1"

// ImageFile is one file of a single-layer image.
type ImageFile struct {
	Path string // absolute path in the image, e.g. /pause
	Mode int64  // permission bits, e.g. 0o755
	Data []byte
}

// WriteImageTar writes a docker-archive tarball of a one-layer image named
// ref (FROM scratch plus files) that runs entrypoint.
func WriteImageTar(w io.Writer, ref string, files []ImageFile, entrypoint []string) error {
	layer, err := layerTar(files)
	if err != nil {
		return err
	}
	layerSum := sha256.Sum256(layer)
	layerHex := hex.EncodeToString(layerSum[:])
	config, err := json.Marshal(map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"created":      time.Unix(0, 0).UTC().Format(time.RFC3339),
		"config":       map[string]any{"Entrypoint": entrypoint, "Env": []string{"PATH=/bin:/usr/bin:/sbin:/usr/sbin"}},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + layerHex}},
		"history":      []map[string]any{{"created_by": "switchyard lab/cluster.WriteImageTar"}},
	})
	if err != nil {
		return err
	}
	configSum := sha256.Sum256(config)
	configName := hex.EncodeToString(configSum[:]) + ".json"
	layerName := layerHex + "/layer.tar"
	manifest, err := json.Marshal([]map[string]any{{"Config": configName, "RepoTags": []string{ref}, "Layers": []string{layerName}}})
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	for _, e := range []struct {
		name string
		data []byte
	}{{layerHex + "/", nil}, {layerName, layer}, {configName, config}, {"manifest.json", manifest}} {
		hdr := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}
		if strings.HasSuffix(e.name, "/") {
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeDir, 0o755, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// layerTar is the image's filesystem: the files and their parent dirs.
func layerTar(files []ImageFile) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	sorted := append([]ImageFile(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	for _, f := range sorted {
		p := strings.TrimPrefix(path.Clean("/"+f.Path), "/")
		if p == "" {
			return nil, fmt.Errorf("image file path %q names the root", f.Path)
		}
		var parents []string
		for d := path.Dir(p); d != "." && !dirs[d]; d = path.Dir(d) {
			parents = append([]string{d}, parents...)
			dirs[d] = true
		}
		for _, d := range parents {
			if err := tw.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: time.Unix(0, 0)}); err != nil {
				return nil, err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: p, Typeflag: tar.TypeReg, Mode: f.Mode, Size: int64(len(f.Data)), ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// BuildPauseImage compiles the lab's pause program (internal/pause,
// CGO_ENABLED=0) from the checkout in repoDir and writes its image as a
// docker-archive tarball to dest.
func BuildPauseImage(ctx context.Context, repoDir, dest string) error {
	repo, err := FindRepo(repoDir)
	if err != nil {
		return err
	}
	goBin, err := lookGo()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "lab-pause-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "pause")
	cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./lab/cluster/internal/pause")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the pause program: %w: %s", err, strings.TrimSpace(string(out)))
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	return writeFileAtomic(dest, func(w io.Writer) error {
		return WriteImageTar(w, PauseImageName, []ImageFile{{Path: "/pause", Mode: 0o755, Data: data}}, []string{"/pause"})
	})
}

// writeFileAtomic writes path through a temporary file in its directory.
func writeFileAtomic(p string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-"+filepath.Base(p))
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), p)
}

// lookGo finds the go command (PATH, else /usr/local/go/bin).
func lookGo() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/local/go/bin/go"); err == nil {
		return "/usr/local/go/bin/go", nil
	}
	return "", fmt.Errorf("no go command in PATH or /usr/local/go/bin")
}

// ImportImage imports a docker-archive tarball into the host node's
// containerd (the CRI namespace), where pods find it by its tag.
func (c *Local) ImportImage(ctx context.Context, tarPath string) error {
	if _, err := os.Stat(tarPath); err != nil {
		return fmt.Errorf("image tarball: %w", err)
	}
	return c.ctr(ctx, "images", "import", tarPath)
}

// pauseImage is the sandbox image's tarball (Options.PauseImage, else the
// lab's own, built once per state dir) and its tag.
func (c *Local) pauseImage(ctx context.Context) (tarPath, ref string, err error) {
	if c.o.PauseImage != "" {
		tags, err := ImageTags(c.o.PauseImage)
		if err != nil {
			return "", "", fmt.Errorf("Options.PauseImage: %w", err)
		}
		return c.o.PauseImage, tags[0], nil
	}
	tarPath = c.path("images", "pause.tar")
	if _, err := os.Stat(tarPath); err != nil {
		if err := BuildPauseImage(ctx, c.o.RepoDir, tarPath); err != nil {
			return "", "", err
		}
	}
	return tarPath, PauseImageName, nil
}

// ImageTags reads the tags of a docker-archive tarball (manifest.json).
func ImageTags(tarPath string) ([]string, error) {
	f, err := os.Open(tarPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%s has no manifest.json: not a docker-archive tarball", tarPath)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tarPath, err)
		}
		if path.Clean(hdr.Name) != "manifest.json" {
			continue
		}
		var m []struct{ RepoTags []string }
		if err := json.NewDecoder(tr).Decode(&m); err != nil {
			return nil, fmt.Errorf("%s: manifest.json: %w", tarPath, err)
		}
		var tags []string
		for _, e := range m {
			tags = append(tags, e.RepoTags...)
		}
		if len(tags) == 0 {
			return nil, fmt.Errorf("%s: manifest.json names no tag", tarPath)
		}
		return tags, nil
	}
}

// importNodeImages imports the pause image and Options.Images.
func (c *Local) importNodeImages(ctx context.Context, pause string) error {
	for _, img := range append([]string{pause}, c.o.Images...) {
		if err := c.ImportImage(ctx, img); err != nil {
			return err
		}
	}
	return nil
}

// BusyboxImageName is the lab's test pod image (WriteBusyboxImage).
const BusyboxImageName = "switchyard.local/lab/busybox:1"

// WriteBusyboxImage writes an image of the host's static busybox
// (package busybox-static) to dest, for test pods: commands run as
// /bin/busybox <applet> ... (the image has no applet links).
func WriteBusyboxImage(dest string) error {
	if err := checkStatic("/bin/busybox"); err != nil {
		return fmt.Errorf("%w (package busybox-static; scripts/ensure-cluster-deps.sh installs it)", err)
	}
	data, err := os.ReadFile("/bin/busybox")
	if err != nil {
		return err
	}
	return writeFileAtomic(dest, func(w io.Writer) error {
		return WriteImageTar(w, BusyboxImageName, []ImageFile{{Path: "/bin/busybox", Mode: 0o755, Data: data}}, []string{"/bin/busybox"})
	})
}

// checkStatic fails for a dynamically linked program: a FROM-scratch
// image has no dynamic loader.
func checkStatic(p string) error {
	f, err := elf.Open(p)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked", p)
		}
	}
	return nil
}

// NodeImages are the images every node of this cluster imports into its
// containerd: the sandbox image (tarball and tag, for sandbox_image) and
// Options.Images. The storage VM's node imports them too.
func (c *Local) NodeImages(ctx context.Context) (pauseTar, pauseRef string, images []string, err error) {
	pauseTar, pauseRef, err = c.pauseImage(ctx)
	return pauseTar, pauseRef, append([]string(nil), c.o.Images...), err
}
