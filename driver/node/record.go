package node

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/protobuf/encoding/protojson"
)

// record is what the node remembers about one volume between calls and
// across restarts: where it is staged, how, and where it is published.
// Access-mode checks (a SINGLE_NODE_SINGLE_WRITER volume at a second
// target) and NodeUnstageVolume (which gets no volume_context) need it.
// Secrets are never recorded.
type record struct {
	VolumeID string `json:"volume_id"`
	Attacher string `json:"node_attach_driver"`
	// Context is the attach keys (Volume.Context); ContextFrom says
	// "publish_context" when they came from there (a static PV).
	Context        map[string]string `json:"volume_context,omitempty"`
	ContextFrom    string            `json:"context_from,omitempty"`
	PublishContext map[string]string `json:"publish_context,omitempty"`
	StagingPath    string            `json:"staging_target_path"`
	Capability     capJSON           `json:"volume_capability"`
	// Staged is false from just before the attacher runs until it has
	// succeeded, so a crash mid-stage still leaves something to unstage.
	Staged bool `json:"staged"`
	// Releasing is set once NodeUnstageVolume has unmounted the volume
	// and lets the attacher release it: the volume no longer holds a
	// shared connection (Host.Volumes leaves it out).
	Releasing bool              `json:"releasing,omitempty"`
	Targets   map[string]target `json:"targets,omitempty"`
}

// target is one NodePublishVolume of the volume.
type target struct {
	Readonly   bool    `json:"readonly"`
	Capability capJSON `json:"volume_capability"`
}

// volume rebuilds what an attacher needs from the record.
func (r *record) volume() *Volume {
	return &Volume{
		ID:             r.VolumeID,
		Context:        r.Context,
		PublishContext: r.PublishContext,
		Capability:     r.Capability.VolumeCapability,
		StagingPath:    r.StagingPath,
	}
}

// capJSON stores a VolumeCapability with protojson, the JSON mapping
// defined for protobuf messages.
type capJSON struct{ *csi.VolumeCapability }

func (c capJSON) MarshalJSON() ([]byte, error) {
	if c.VolumeCapability == nil {
		return []byte("null"), nil
	}
	return protojson.Marshal(c.VolumeCapability)
}

func (c *capJSON) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		c.VolumeCapability = nil
		return nil
	}
	vc := &csi.VolumeCapability{}
	if err := protojson.Unmarshal(b, vc); err != nil {
		return err
	}
	c.VolumeCapability = vc
	return nil
}

// store keeps one JSON file per volume in a directory. File names are the
// SHA-256 of the volume id: proxy ids contain "/" and ":", and a 128-byte id
// in hex would exceed the 255-byte file name limit.
type store struct{ dir string }

const (
	recordSuffix = ".json"
	tempPrefix   = ".tmp-"
)

func newStore(dir string) (*store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("node state directory %s: %w", dir, err)
	}
	// A crash between writing a temporary file and renaming it leaves the
	// temporary behind; the record it replaced is still intact.
	leftovers, _ := filepath.Glob(filepath.Join(dir, tempPrefix+"*"))
	for _, f := range leftovers {
		_ = os.Remove(f)
	}
	return &store{dir: dir}, nil
}

func (s *store) file(volumeID string) string {
	sum := sha256.Sum256([]byte(volumeID))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:])+recordSuffix)
}

// load returns the volume's record, or nil when there is none.
func (s *store) load(volumeID string) (*record, error) {
	f := s.file(volumeID)
	b, err := os.ReadFile(f)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read node record %s: %w", f, err)
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("node record %s is corrupt (%v); remove it once the volume is unmounted", f, err)
	}
	if r.VolumeID != volumeID {
		return nil, fmt.Errorf("node record %s is for volume %q, not %q", f, r.VolumeID, volumeID)
	}
	return &r, nil
}

// save writes the record atomically: a temporary file, synced, renamed over
// the old one, and the directory synced, so a crash leaves the old record
// or the new one, never a torn file.
func (s *store) save(r *record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode node record for volume %s: %w", r.VolumeID, err)
	}
	f := s.file(r.VolumeID)
	tmp, err := os.CreateTemp(s.dir, tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("write node record %s: %w", f, err)
	}
	_, werr := tmp.Write(b)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), f)
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write node record %s: %w", f, werr)
	}
	return syncDir(s.dir)
}

// list loads every record in the directory. A record that cannot be read
// fails the listing: callers decide from it whether a shared connection
// is still in use, and guessing could pull it from under a volume.
func (s *store) list() ([]*record, error) {
	files, err := filepath.Glob(filepath.Join(s.dir, "*"+recordSuffix))
	if err != nil {
		return nil, err
	}
	out := make([]*record, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("read node record %s: %w", f, err)
		}
		var r record
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("node record %s is corrupt (%v); remove it once its volume is unmounted", f, err)
		}
		out = append(out, &r)
	}
	return out, nil
}

// remove deletes the volume's record; a missing record is not an error.
func (s *store) remove(volumeID string) error {
	f := s.file(volumeID)
	if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove node record %s: %w", f, err)
	}
	return syncDir(s.dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync node state directory: %w", err)
	}
	defer d.Close()
	// Some filesystems cannot fsync a directory (EINVAL); the rename is
	// then as durable as they make it.
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync node state directory %s: %w", dir, err)
	}
	return nil
}

// targets is r.Targets, nil-safe for a volume without a record.
func (r *record) targets() map[string]target {
	if r == nil {
		return nil
	}
	return r.Targets
}
