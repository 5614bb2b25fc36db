package storage

import (
	"os"
	"path"
	"strings"
)

// altroot is where TrueNAS imports pools: tank/a is mounted at /mnt/tank/a.
const altroot = "/mnt"

// apiMountpoint turns the model's mountpoint of a filesystem into the
// path TrueNAS reports. The model knows no altroot, so /tank/a becomes
// /mnt/tank/a; a mountpoint already under /mnt (set by whoever runs the
// simulator) is kept.
func apiMountpoint(mp string) string {
	if mp == "" {
		return ""
	}
	if mp == altroot || strings.HasPrefix(mp, altroot+"/") {
		return mp
	}
	return altroot + mp
}

// hostDir maps an API path (/mnt/tank/a/sub) to the directory or file on
// this machine that holds it; ok=false outside every mounted dataset.
func (s *service) hostDir(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") {
		return "", false
	}
	clean := path.Clean(p)
	if clean != altroot && !strings.HasPrefix(clean, altroot+"/") {
		return "", false
	}
	if h, ok := s.m.HostPath(clean); ok {
		return h, true
	}
	return s.m.HostPath(strings.TrimPrefix(clean, altroot))
}

// datasetMountpoint is where TrueNAS mounts dataset name ("" when it is
// not a mounted filesystem).
func (s *service) datasetMountpoint(name string) string {
	in, err := s.m.Get(name)
	if err != nil || !in.Mounted {
		return ""
	}
	return apiMountpoint(in.Mountpoint)
}

// pathExists reports whether an API path exists on this machine.
func (s *service) pathExists(p string) bool {
	h, ok := s.hostDir(p)
	if !ok {
		return false
	}
	_, err := os.Lstat(h)
	return err == nil
}
