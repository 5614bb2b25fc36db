package dirvol

import (
	"os"
	"testing"
	"time"
)

// The cache answers from memory only while the file is the one it read:
// a file replaced (writeJSON), edited in place or removed is read again.
func TestMetaCacheFollowsTheFile(t *testing.T) {
	s := store{base: t.TempDir(), cache: &metaCache{}}
	path := s.volumeMetaPath("v1")
	if err := writeJSON(path, &volumeMeta{Name: "a", CapacityBytes: 1}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		m, err := s.readVolumeMeta("v1")
		if err != nil || m == nil || m.CapacityBytes != 1 {
			t.Fatalf("read: %+v %v", m, err)
		}
		m.CapacityBytes = 99 // a caller's change must not reach the cache
	}
	if err := writeJSON(path, &volumeMeta{Name: "a", CapacityBytes: 2}); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.readVolumeMeta("v1"); m == nil || m.CapacityBytes != 2 {
		t.Fatalf("after replace: %+v", m)
	}
	// Edited in place, same size: the modification time differs.
	later := time.Now().Add(time.Hour)
	if err := os.WriteFile(path, []byte(`{"name":"a","capacityBytes":3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.readVolumeMeta("v1"); m == nil || m.CapacityBytes != 3 {
		t.Fatalf("after edit: %+v", m)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if m, err := s.readVolumeMeta("v1"); m != nil || err != nil {
		t.Fatalf("after remove: %+v %v", m, err)
	}
}
