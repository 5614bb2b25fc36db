package zfsgeneric

import (
	"strings"

	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// settings is the typed view of a zfs-generic-* config's own keys
// (democratic-csi's; see docs/backends/zfs-generic.md); the keys every ZFS
// backend shares are driver/zfs/engine's.
type settings struct {
	driver string
	cli    engine.CLIConfig
	share  shareSettings
}

// block reports whether volumes are zvols.
func (s settings) block() bool { return s.driver == DriverISCSI || s.driver == DriverNVMeoF }

// fsTypes are the mount fs_types nodes may be asked for.
func (s settings) fsTypes() []string {
	switch s.driver {
	case DriverNFS:
		return engine.NFSFSTypes
	case DriverSMB:
		return engine.SMBFSTypes
	}
	return engine.BlockFSTypes
}

// shareSettings holds the keys of the protocol section.
type shareSettings struct {
	host  string      // nfs/smb shareHost
	props []config.KV // nfs/smb: share, sharenfs / sharesmb

	// iscsi and nvmeof
	hostAccess   engine.Initiator // allowList: the initiator name targets admit; OpenTargets by default
	basename     string
	nameTemplate *engine.Template
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
	dhchap          engine.DHCHAP // nvmeof.dhchap: keys set on each granted host
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
	case DriverNFS, DriverSMB, DriverISCSI, DriverNVMeoF:
	default:
		r.Add("driver", "%q is not a zfs-generic driver", s.driver)
	}
	s.cli = engine.ReadCLI(r, false)
	engine.Validate(r)

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
		tmpl, err := engine.ParseTemplate(t)
		if err != nil {
			r.Add(section+".nameTemplate", "%v", err)
		}
		s.nameTemplate = tmpl
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
	if parseHostAccess(r, "iscsi") {
		s.hostAccess = engine.IQN
		s.tpgAttrs = closed(r, s.tpgAttrs, "generate_node_acls", t+".tpg.attributes", "iscsi", "initiator")
	}
	return s
}

// closed makes the attribute that opens a target to everyone 0: given as
// anything else it contradicts hostAccess: allowList (a problem); left
// out, it is added, so the target is closed whatever the host's defaults.
func closed(r *config.Reader, attrs []config.KV, open, section, proto, who string) []config.KV {
	for _, a := range attrs {
		if a.Key == open {
			if a.Value != "0" {
				r.Add(section+"."+open, "is %s, which lets every %s in; %s.hostAccess: allowList needs 0 (or leave it out)", a.Value, who, proto)
			}
			return attrs
		}
	}
	return append(attrs, config.KV{Key: open, Value: "0"})
}

// parseHostAccess reads <section>.hostAccess, switchyard's key for
// closed targets: open (the default: every initiator, as democratic-csi)
// or allowList (only the nodes ControllerPublishVolume granted).
func parseHostAccess(r *config.Reader, section string) bool {
	switch v := r.Str(section + ".hostAccess"); v {
	case "", "open":
		return false
	case "allowList":
		return true
	default:
		r.Add(section+".hostAccess", "must be open (every initiator; the default) or allowList (only the nodes a volume is published to), got %q", v)
		return false
	}
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
	if parseHostAccess(r, "nvmeof") {
		s.hostAccess = engine.NQN
		s.subsystemAttrs = closed(r, s.subsystemAttrs, "allow_any_host", t+".subsystem.attributes", "nvmeof", "host")
	}
	s.dhchap = engine.ParseDHCHAP(r, "nvmeof", s.hostAccess == engine.NQN)
	return s
}

func kvs(items []string) []config.KV {
	out := make([]config.KV, len(items))
	for i, s := range items {
		out[i] = config.KV{Value: s}
	}
	return out
}
