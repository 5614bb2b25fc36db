package engine

import (
	"strconv"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/volumeid"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// settings is the typed view of the keys every ZFS backend shares
// (democratic-csi's; see docs/backends/zfs-generic.md).
type settings struct {
	driver string
	kind   kind

	parent   string // zfs.datasetParentName, without trailing "/"
	snapshot string // zfs.detachedSnapshotsDatasetParentName ("" = no detached snapshots)

	datasetProps []propTemplate
	quotas       bool
	reservation  bool
	permMode     string
	permUser     string
	permGroup    string
	acls         []string
	aclBinary    string

	zvolCompression string
	zvolDedup       string
	zvolReserve     bool
	zvolBlocksize   int64

	idHash     string
	retain     bool // _private.csi.volume.deleteStrategy: retain
	instanceID string
}

type propTemplate struct {
	name string
	tmpl template
}

// kind is what a volume is on the host.
type kind int

const (
	filesystem kind = iota
	volume
)

func (k kind) String() string {
	if k == volume {
		return "volume"
	}
	return "filesystem"
}

// Validate reads the keys every ZFS backend shares (zfs.*,
// _private.csi.volume.*, instance_id) and adds their problems to r.
// Backends call it while reading their own keys, so every problem of a
// config is reported at once.
func Validate(r *config.Reader) { readSettings(r) }

// readSettings reads the keys every ZFS backend shares, whatever drives
// the host.
func readSettings(r *config.Reader) settings {
	var s settings
	s.parent = strings.TrimRight(r.Required("zfs.datasetParentName", "the dataset under which volumes are made, e.g. tank/k8s/vols"), "/")
	s.snapshot = strings.TrimRight(r.Str("zfs.detachedSnapshotsDatasetParentName"), "/")
	checkDatasetName(r, "zfs.datasetParentName", s.parent)
	if s.snapshot != "" {
		checkDatasetName(r, "zfs.detachedSnapshotsDatasetParentName", s.snapshot)
		if s.parent != "" && (strings.HasPrefix(s.parent+"/", s.snapshot+"/") || strings.HasPrefix(s.snapshot+"/", s.parent+"/")) {
			r.Add("zfs.detachedSnapshotsDatasetParentName", "must not overlap zfs.datasetParentName (%s and %s): they may be siblings, but neither may contain the other", s.snapshot, s.parent)
		}
	}

	for _, p := range r.Pairs("zfs.datasetProperties") {
		t, err := parseTemplate(p.Value)
		if err != nil {
			r.Add("zfs.datasetProperties."+p.Key, "%v", err)
			continue
		}
		s.datasetProps = append(s.datasetProps, propTemplate{name: p.Key, tmpl: t})
	}
	s.quotas = r.Bool("zfs.datasetEnableQuotas", false)
	s.reservation = r.Bool("zfs.datasetEnableReservation", false)
	s.permMode = r.Str("zfs.datasetPermissionsMode")
	if s.permMode != "" {
		if _, err := strconv.ParseUint(strings.TrimPrefix(s.permMode, "0o"), 8, 32); err != nil {
			r.Add("zfs.datasetPermissionsMode", "must be an octal mode such as \"0777\", got %q", s.permMode)
		}
	}
	s.permUser = r.Str("zfs.datasetPermissionsUser")
	s.permGroup = r.Str("zfs.datasetPermissionsGroup")
	s.acls = r.List("zfs.datasetPermissionsAcls")
	s.aclBinary = r.Str("zfs.datasetPermissionsAclsBinary")
	if s.aclBinary == "" {
		s.aclBinary = "setfacl"
	}

	s.zvolCompression = r.Str("zfs.zvolCompression")
	s.zvolDedup = r.Str("zfs.zvolDedup")
	s.zvolReserve = r.Bool("zfs.zvolEnableReservation", false)
	s.zvolBlocksize = 16 << 10
	if b := r.Str("zfs.zvolBlocksize"); b != "" {
		n, err := zfs.ParseSize(b)
		if err != nil || n < 512 || n > 16<<20 || n&(n-1) != 0 {
			r.Add("zfs.zvolBlocksize", "must be a power of two from 512 to 16M (512, 4K, 16K, 64K, 128K...), got %q", b)
		} else {
			s.zvolBlocksize = n
		}
	}

	strategy, err := volumeid.ParseStrategy(r.Str("_private.csi.volume.idHash.strategy"))
	if err != nil {
		r.Add("_private.csi.volume.idHash.strategy", "%v", err)
	}
	s.idHash = strategy
	if t := r.Str("_private.csi.volume.idTemplate"); t != "" {
		r.Add("_private.csi.volume.idTemplate", "is not supported by switchyard (volume ids are the volume name, optionally hashed with _private.csi.volume.idHash.strategy); remove it")
	}
	switch ds := r.Str("_private.csi.volume.deleteStrategy"); ds {
	case "", "delete":
	case "retain":
		s.retain = true
	default:
		r.Add("_private.csi.volume.deleteStrategy", "must be delete or retain, got %q", ds)
	}
	s.instanceID = r.Str("instance_id")
	return s
}

// checkDatasetName applies zfs's naming rules early, so a typo is a config
// error rather than a failed CreateVolume.
func checkDatasetName(r *config.Reader, key, name string) {
	if name == "" {
		return
	}
	if len(name) > 200 {
		r.Add(key, "is %d bytes long; zfs names are limited to 255 bytes and volume ids need room below it", len(name))
	}
	for _, comp := range strings.Split(name, "/") {
		if comp == "" {
			r.Add(key, "%q has an empty path component", name)
			return
		}
		if bad := volumeid.InvalidChars(comp, func(c byte) bool { return volumeid.IsAlnum(c) || strings.IndexByte("-_.:", c) >= 0 }); bad != "" {
			r.Add(key, "%q contains characters zfs does not allow in names: %q", name, bad)
			return
		}
	}
	if strings.ContainsAny(name, "@#") {
		r.Add(key, "%q must name a dataset, not a snapshot or bookmark", name)
	}
}

// datasetName is the dataset of volume id.
func (s *settings) datasetName(id string) string { return s.parent + "/" + id }
