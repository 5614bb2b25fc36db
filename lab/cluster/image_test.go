package cluster

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// readTar maps a tarball's entry names to their contents.
func readTar(t *testing.T, data []byte) (map[string][]byte, map[string]*tar.Header) {
	t.Helper()
	files, hdrs := map[string][]byte{}, map[string]*tar.Header{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, hdrs
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		files[h.Name], hdrs[h.Name] = b, h
	}
}

func TestWriteImageTarIsADockerArchive(t *testing.T) {
	var buf bytes.Buffer
	err := WriteImageTar(&buf, "switchyard.local/test:1", []ImageFile{
		{Path: "/bin/busybox", Mode: 0o755, Data: []byte("binary")},
		{Path: "/etc/x/y.conf", Mode: 0o644, Data: []byte("conf")},
	}, []string{"/bin/busybox", "sleep", "3600"})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := readTar(t, buf.Bytes())
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if len(manifest) != 1 || !slices.Equal(manifest[0].RepoTags, []string{"switchyard.local/test:1"}) || len(manifest[0].Layers) != 1 {
		t.Fatalf("manifest = %+v", manifest)
	}
	// The config names the layer by the sha256 of its (uncompressed) tar:
	// containerd refuses an image whose diff_id does not match.
	layer := files[manifest[0].Layers[0]]
	sum := sha256.Sum256(layer)
	var config struct {
		Architecture, OS string
		Config           struct{ Entrypoint []string }
		RootFS           struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	cfgData := files[manifest[0].Config]
	if err := json.Unmarshal(cfgData, &config); err != nil {
		t.Fatalf("config: %v", err)
	}
	csum := sha256.Sum256(cfgData)
	if manifest[0].Config != hex.EncodeToString(csum[:])+".json" {
		t.Errorf("config file %s is not named by its digest", manifest[0].Config)
	}
	if config.RootFS.DiffIDs[0] != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("diff_id %s does not match the layer", config.RootFS.DiffIDs[0])
	}
	if config.OS != "linux" || config.Architecture != "amd64" || config.Config.Entrypoint[0] != "/bin/busybox" {
		t.Errorf("config = %+v", config)
	}
	lf, lh := readTar(t, layer)
	if string(lf["bin/busybox"]) != "binary" || lh["bin/busybox"].Mode != 0o755 {
		t.Errorf("layer bin/busybox: %q mode %o", lf["bin/busybox"], lh["bin/busybox"].Mode)
	}
	for _, d := range []string{"bin/", "etc/", "etc/x/"} {
		if h := lh[d]; h == nil || h.Typeflag != tar.TypeDir {
			t.Errorf("layer lacks the directory %s", d)
		}
	}
	// The same input gives the same bytes (the image's identity is stable).
	var again bytes.Buffer
	_ = WriteImageTar(&again, "switchyard.local/test:1", []ImageFile{
		{Path: "/etc/x/y.conf", Mode: 0o644, Data: []byte("conf")},
		{Path: "/bin/busybox", Mode: 0o755, Data: []byte("binary")},
	}, []string{"/bin/busybox", "sleep", "3600"})
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("WriteImageTar is not deterministic")
	}

	p := filepath.Join(t.TempDir(), "img.tar")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tags, err := ImageTags(p)
	if err != nil || !slices.Equal(tags, []string{"switchyard.local/test:1"}) {
		t.Errorf("ImageTags = %v, %v", tags, err)
	}
	if err := WriteImageTar(io.Discard, "x:1", []ImageFile{{Path: "/", Data: nil}}, nil); err == nil {
		t.Error("a file at / was accepted")
	}
}

func TestImageTagsRejectsOtherTarballs(t *testing.T) {
	p := filepath.Join(t.TempDir(), "plain.tar")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	_ = tw.WriteHeader(&tar.Header{Name: "a", Mode: 0o644, Size: 1})
	_, _ = tw.Write([]byte("a"))
	_ = tw.Close()
	_ = os.WriteFile(p, buf.Bytes(), 0o644)
	if _, err := ImageTags(p); err == nil {
		t.Error("a tarball without manifest.json gave tags")
	}
}
