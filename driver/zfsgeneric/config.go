package zfsgeneric

import (
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/volumeid"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// settings is the typed view of a zfs-generic-* config (democratic-csi's
// keys; see docs/backends/zfs-generic.md).
type settings struct {
	driver string
	kind   kind

	ssh      *zfs.SSHConfig // nil: run zfs locally
	paths    zfs.Paths
	sudo     bool
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

	share shareSettings
}

type propTemplate struct {
	name string
	tmpl template
}

// shareSettings holds the keys of the protocol section.
type shareSettings struct {
	host  string      // nfs/smb shareHost
	props []config.KV // nfs/smb: share, sharenfs / sharesmb

	// iscsi and nvmeof
	basename     string
	nameTemplate *template
	namePrefix   string
	nameSuffix   string
	cliSudo      bool

	tpgAttrs   []config.KV
	tpgAuth    []config.KV
	blockAttrs []config.KV
	portal     string
	portals    []string
	iface      string

	transport       string
	transports      []string
	ports           []string
	subsystemAttrs  []config.KV
	nvmetcli        string
	importedFlag    string
	nvmetConfigPath string
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

// Validate reports every problem in a zfs-generic-* config.
func Validate(cfg config.Tree) []config.Problem {
	_, ps := parseSettings(cfg)
	return ps
}

func parseSettings(cfg config.Tree) (settings, []config.Problem) {
	r := config.NewReader(cfg)
	s := settings{driver: r.Str("driver")}
	switch s.driver {
	case DriverNFS, DriverSMB:
		s.kind = filesystem
	case DriverISCSI, DriverNVMeoF:
		s.kind = volume
	default:
		r.Add("driver", "%q is not a zfs-generic driver", s.driver)
	}

	if v, ok := cfg.Lookup("sshConnection"); ok && v != nil {
		s.ssh = parseSSH(r)
	}
	s.sudo = r.Bool("zfs.cli.sudoEnabled", false)
	s.paths = zfs.Paths{ZFS: r.Str("zfs.cli.paths.zfs"), Zpool: r.Str("zfs.cli.paths.zpool"),
		Sudo: r.Str("zfs.cli.paths.sudo"), Chroot: r.Str("zfs.cli.paths.chroot")}
	parseCommon(r, &s)

	switch s.driver {
	case DriverNFS:
		s.share = parsePropertyShare(r, "nfs", "sharenfs")
	case DriverSMB:
		s.share = parsePropertyShare(r, "smb", "sharesmb")
	case DriverISCSI:
		s.share = parseISCSI(r)
	case DriverNVMeoF:
		s.share = parseNVMeoF(r)
	}
	return s, r.Problems()
}

// parseCommon reads the keys every ZFS backend shares (zfs.*, _private,
// instance_id), whatever drives the host.
func parseCommon(r *config.Reader, s *settings) {
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
}

func parseSSH(r *config.Reader) *zfs.SSHConfig {
	c := &zfs.SSHConfig{
		Host:       r.Required("sshConnection.host", "the storage host's address"),
		Username:   r.Required("sshConnection.username", "the user to log in as"),
		Password:   r.Str("sshConnection.password"),
		PrivateKey: r.Str("sshConnection.privateKey"),
		Passphrase: r.Str("sshConnection.passphrase"),
	}
	if p := r.Str("sshConnection.port"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			r.Add("sshConnection.port", "must be a TCP port (1-65535), got %q", p)
		}
		c.Port = n
	}
	if v := r.Str("sshConnection.maxSessions"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			r.Add("sshConnection.maxSessions", "must be a number of sessions from 1 to 1000 (the server's MaxSessions, 10 by default), got %q", v)
		}
		c.MaxSessions = n
	}
	if v := r.Str("sshConnection.keepaliveInterval"); v != "" {
		// democratic-csi (ssh2) takes milliseconds; 0 turns keepalives off.
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			r.Add("sshConnection.keepaliveInterval", "must be milliseconds (0 turns keepalives off), got %q", v)
		}
		c.KeepAlive = time.Duration(n) * time.Millisecond
		if n == 0 {
			c.KeepAlive = -1
		}
	}
	if v := r.Str("sshConnection.readyTimeout"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			r.Add("sshConnection.readyTimeout", "must be milliseconds, got %q", v)
		}
		c.DialTimeout = time.Duration(n) * time.Millisecond
	}
	c.HostKeyFingerprint = r.Str("sshConnection.hostKeyFingerprint")
	if c.Password == "" && c.PrivateKey == "" {
		r.Add("sshConnection", "set password or privateKey")
	}
	return c
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

func parsePropertyShare(r *config.Reader, section, prop string) shareSettings {
	var s shareSettings
	switch st := r.Str(section + ".shareStrategy"); st {
	case "setDatasetProperties":
	case "":
		r.Add(section+".shareStrategy", "required: setDatasetProperties")
	default:
		r.Add(section+".shareStrategy", "unknown share strategy %q: zfs-generic supports setDatasetProperties", st)
	}
	s.host = r.Required(section+".shareHost", "the address nodes mount the share from")
	for _, p := range r.Pairs(section + ".shareStrategySetDatasetProperties.properties") {
		if p.Key != "share" && p.Key != prop {
			r.Add(section+".shareStrategySetDatasetProperties.properties."+p.Key, "only share and %s are set by this strategy", prop)
			continue
		}
		if p.Value != "" {
			s.props = append(s.props, p)
		}
	}
	return s
}

func parseNaming(r *config.Reader, section string, s *shareSettings) {
	if t := r.Str(section + ".nameTemplate"); t != "" {
		tmpl, err := parseTemplate(t)
		if err != nil {
			r.Add(section+".nameTemplate", "%v", err)
		}
		s.nameTemplate = &tmpl
	}
	s.namePrefix = r.Str(section + ".namePrefix")
	s.nameSuffix = r.Str(section + ".nameSuffix")
}

func parseISCSI(r *config.Reader) shareSettings {
	var s shareSettings
	switch st := r.Str("iscsi.shareStrategy"); st {
	case "targetCli":
	case "":
		r.Add("iscsi.shareStrategy", "required: targetCli")
	default:
		r.Add("iscsi.shareStrategy", "unknown share strategy %q: zfs-generic-iscsi supports targetCli", st)
	}
	const t = "iscsi.shareStrategyTargetCli"
	s.basename = r.Required(t+".basename", "the IQN prefix of targets, e.g. iqn.2003-01.org.linux-iscsi.host.x8664:sn.1234")
	s.cliSudo = r.Bool(t+".sudoEnabled", false)
	s.tpgAttrs = r.Pairs(t + ".tpg.attributes")
	s.tpgAuth = r.Pairs(t + ".tpg.auth")
	s.blockAttrs = r.Pairs(t + ".block.attributes")
	for _, group := range [][]config.KV{s.tpgAttrs, s.tpgAuth, s.blockAttrs} {
		for _, p := range group {
			if strings.ContainsAny(p.Key+p.Value, " \t\n\"'`$\\") {
				r.Add(t, "attribute %s: names and values must not contain spaces, quotes or shell characters", p.Key)
			}
		}
	}
	s.portal = r.Str("iscsi.targetPortal")
	s.portals = r.List("iscsi.targetPortals")
	s.iface = r.Str("iscsi.interface")
	if s.portal == "" && len(s.portals) == 0 {
		r.Add("iscsi.targetPortal", "required: the portal nodes log in to (host[:port])")
	}
	parseNaming(r, "iscsi", &s)
	return s
}

func parseNVMeoF(r *config.Reader) shareSettings {
	var s shareSettings
	switch st := r.Str("nvmeof.shareStrategy"); st {
	case "nvmetCli":
	case "":
		r.Add("nvmeof.shareStrategy", "required: nvmetCli")
	case "spdkCli":
		r.Add("nvmeof.shareStrategy", "spdkCli is not supported by switchyard; use nvmetCli (the kernel target)")
	default:
		r.Add("nvmeof.shareStrategy", "unknown share strategy %q: zfs-generic-nvmeof supports nvmetCli", st)
	}
	s.transport = r.Str("nvmeof.transport")
	s.transports = r.List("nvmeof.transports")
	if s.transport == "" && len(s.transports) == 0 {
		r.Add("nvmeof.transports", "required: where nodes connect, e.g. tcp://192.168.1.10:4420")
	}
	const t = "nvmeof.shareStrategyNvmetCli"
	s.basename = r.Required(t+".basename", "the NQN prefix of subsystems, e.g. nqn.2003-01.org.linux-nvme")
	s.cliSudo = r.Bool(t+".sudoEnabled", false)
	s.nvmetcli = r.Str(t + ".nvmetcliPath")
	if s.nvmetcli == "" {
		s.nvmetcli = "nvmetcli"
	}
	s.importedFlag = r.Str(t + ".configIsImportedFilePath")
	s.nvmetConfigPath = r.Str(t + ".configPath")
	s.ports = r.List(t + ".ports")
	if len(s.ports) == 0 {
		r.Add(t+".ports", "required: the nvmet port ids subsystems are linked to, e.g. [\"1\"]")
	}
	s.subsystemAttrs = r.Pairs(t + ".subsystem.attributes")
	for _, p := range append(append([]config.KV{}, s.subsystemAttrs...), kvs(s.ports)...) {
		if strings.ContainsAny(p.Key+p.Value, " \t\n\"'`$\\/") {
			r.Add(t, "%q: names and values must not contain spaces, slashes, quotes or shell characters", p.Key+p.Value)
		}
	}
	parseNaming(r, "nvmeof", &s)
	return s
}

func kvs(items []string) []config.KV {
	out := make([]config.KV, len(items))
	for i, s := range items {
		out[i] = config.KV{Value: s}
	}
	return out
}

// datasetName is the dataset of volume id.
func (s *settings) datasetName(id string) string { return s.parent + "/" + id }
