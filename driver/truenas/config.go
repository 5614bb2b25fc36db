package truenas

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/truenas/api"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// parseHTTP reads httpConnection (democratic-csi's keys plus switchyard's
// transport, allowPlaintextApiKey, caCert, timeout, maxConcurrentCalls).
func parseHTTP(r *config.Reader) api.Config {
	c := api.Config{
		Host:                 r.Required("httpConnection.host", "the TrueNAS address"),
		Protocol:             r.Str("httpConnection.protocol"),
		Username:             r.Str("httpConnection.username"),
		Password:             r.Str("httpConnection.password"),
		APIKey:               r.Str("httpConnection.apiKey"),
		AllowInsecure:        r.Bool("httpConnection.allowInsecure", false),
		Transport:            r.Str("httpConnection.transport"),
		AllowPlaintextAPIKey: r.Bool("httpConnection.allowPlaintextApiKey", false),
	}
	if p := r.Str("httpConnection.port"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			r.Add("httpConnection.port", "must be a TCP port (1-65535), got %q", p)
		}
		c.Port = n
	}
	switch c.Protocol {
	case "", "http", "https":
	default:
		r.Add("httpConnection.protocol", "must be http or https, got %q", c.Protocol)
	}
	if v := r.Str("httpConnection.apiVersion"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n != 2 {
			r.Add("httpConnection.apiVersion", "only API version 2 exists on supported TrueNAS releases, got %q", v)
		}
		c.APIVersion = n
	}
	switch c.Transport {
	case "", "auto", "websocket", "rest":
	default:
		r.Add("httpConnection.transport", "must be auto, websocket or rest, got %q", c.Transport)
	}
	if pem := r.Str("httpConnection.caCert"); pem != "" {
		if !strings.Contains(pem, "-----BEGIN CERTIFICATE-----") {
			r.Add("httpConnection.caCert", "must be a PEM certificate (-----BEGIN CERTIFICATE-----...)")
		}
		c.CACert = []byte(pem)
	}
	if v := r.Str("httpConnection.timeout"); v != "" {
		// milliseconds, like the other democratic-csi timeouts
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			r.Add("httpConnection.timeout", "must be milliseconds, got %q", v)
		}
		c.Timeout = time.Duration(n) * time.Millisecond
	}
	if v := r.Str("httpConnection.maxConcurrentCalls"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 20 {
			r.Add("httpConnection.maxConcurrentCalls", "must be 1 to 20 (TrueNAS refuses more concurrent calls per connection), got %q", v)
		}
		c.MaxConcurrentCalls = n
	}
	if c.APIKey == "" && (c.Username == "" || c.Password == "") {
		r.Add("httpConnection", "set apiKey, or username and password")
	}
	return c
}

// shareSettings are the keys of the driver's protocol section.
type shareSettings struct {
	host string // nfs/smb shareHost

	// nfs
	nfsAlldirs        bool
	nfsHosts, nfsNets []string
	maprootUser       string
	maprootGroup      string
	mapallUser        string
	mapallGroup       string
	commentTemplate   *engine.Template
	smbFields         map[string]any // smb share* keys, as API fields
	smbAuxTemplate    *engine.Template
	nameTemplate      *engine.Template
	namePrefix        string
	nameSuffix        string
	portal            string
	portals           []string
	iface             string
	targetGroups      []targetGroup
	extent            map[string]any // iscsi extent fields from extent* keys
	extentComment     *engine.Template
	nvmeTransports    []string
	nvmePorts         []int          // nvmet.port ids to link; empty: every TCP port
	nvmeSubsysFields  map[string]any // nvmeof.subsystemTemplate: more nvmet.subsys.create fields
	nvmeNSFields      map[string]any // nvmeof.namespaceTemplate: more nvmet.namespace.create fields
	nvmeAllowAnyHost  bool
	hostAccess        engine.Initiator // iscsi/nvmeof.hostAccess: allowList; OpenTargets by default
	nvmeDHCHAP        engine.DHCHAP    // nvmeof.dhchap: keys set on each granted nvmet.host
}

type targetGroup struct {
	Portal     int    `json:"portal"`
	Initiator  *int   `json:"initiator"`
	AuthMethod string `json:"authmethod"`
	Auth       *int   `json:"auth"`
}

func template(r *config.Reader, key string) *engine.Template {
	s := r.Str(key)
	if s == "" {
		return nil
	}
	t, err := engine.ParseTemplate(s)
	if err != nil {
		r.Add(key, "%v", err)
		return nil
	}
	return t
}

func parseNaming(r *config.Reader, section string, s *shareSettings) {
	s.nameTemplate = template(r, section+".nameTemplate")
	s.namePrefix = r.Str(section + ".namePrefix")
	s.nameSuffix = r.Str(section + ".nameSuffix")
}

func parseNFS(r *config.Reader) shareSettings {
	s := shareSettings{host: r.Required("nfs.shareHost", "the address nodes mount shares from")}
	// Accepted for democratic-csi configs, not sent: TrueNAS 22.12+ refuses alldirs.
	s.nfsAlldirs = r.Bool("nfs.shareAlldirs", false)
	s.nfsHosts = r.List("nfs.shareAllowedHosts")
	s.nfsNets = r.List("nfs.shareAllowedNetworks")
	s.maprootUser = r.Str("nfs.shareMaprootUser")
	s.maprootGroup = r.Str("nfs.shareMaprootGroup")
	s.mapallUser = r.Str("nfs.shareMapallUser")
	s.mapallGroup = r.Str("nfs.shareMapallGroup")
	s.commentTemplate = template(r, "nfs.shareCommentTemplate")
	return s
}

// smbKeys maps democratic-csi's smb.share* keys to sharing.smb fields.
var smbKeys = []struct{ key, field, kind string }{
	{"shareHome", "home", "bool"},
	{"shareAllowedHosts", "hostsallow", "list"},
	{"shareDeniedHosts", "hostsdeny", "list"},
	{"shareDefaultPermissions", "default_permissions", "bool"},
	{"shareGuestOk", "guestok", "bool"},
	{"shareGuestOnly", "guestonly", "bool"},
	{"shareShowHiddenFiles", "showhiddenfiles", "bool"},
	{"shareRecycleBin", "recyclebin", "bool"},
	{"shareBrowsable", "browsable", "bool"},
	{"shareAccessBasedEnumeration", "abe", "bool"},
	{"shareTimeMachine", "timemachine", "bool"},
	{"shareStorageTask", "storage_task", "int"},
}

func parseSMB(r *config.Reader) shareSettings {
	s := shareSettings{host: r.Required("smb.shareHost", "the address nodes mount shares from"), smbFields: map[string]any{}}
	parseNaming(r, "smb", &s)
	s.smbAuxTemplate = template(r, "smb.shareAuxiliaryConfigurationTemplate")
	for _, k := range smbKeys {
		key := "smb." + k.key
		if _, ok := r.Tree().Lookup(key); !ok {
			continue
		}
		switch k.kind {
		case "bool":
			s.smbFields[k.field] = r.Bool(key, false)
		case "list":
			s.smbFields[k.field] = r.List(key)
		case "int":
			if v := r.Str(key); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil {
					r.Add(key, "must be a task id, got %q", v)
				}
				s.smbFields[k.field] = n
			}
		}
	}
	return s
}

func parseISCSI(r *config.Reader) shareSettings {
	s := shareSettings{extent: map[string]any{}}
	s.portal = r.Str("iscsi.targetPortal")
	s.portals = r.List("iscsi.targetPortals")
	s.iface = r.Str("iscsi.interface")
	if s.portal == "" && len(s.portals) == 0 {
		r.Add("iscsi.targetPortal", "required: the portal nodes log in to (host[:port])")
	}
	parseNaming(r, "iscsi", &s)
	groups, _ := r.Tree().Lookup("iscsi.targetGroups")
	list, _ := groups.([]any)
	if len(list) == 0 {
		r.Add("iscsi.targetGroups", "required: at least one {targetGroupPortalGroup, targetGroupInitiatorGroup, targetGroupAuthType}")
	}
	for i, g := range list {
		m, ok := g.(map[string]any)
		if !ok {
			if t, ok2 := g.(config.Tree); ok2 {
				m, ok = map[string]any(t), true
			}
		}
		key := "iscsi.targetGroups[" + strconv.Itoa(i) + "]"
		if !ok {
			r.Add(key, "must be a map")
			continue
		}
		sub := config.NewReader(config.Tree(m))
		tg := targetGroup{AuthMethod: "NONE"}
		if n, err := strconv.Atoi(sub.Str("targetGroupPortalGroup")); err == nil {
			tg.Portal = n
		} else {
			r.Add(key+".targetGroupPortalGroup", "required: the id of an iSCSI portal on TrueNAS (e.g. 1)")
		}
		if v := sub.Str("targetGroupInitiatorGroup"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				r.Add(key+".targetGroupInitiatorGroup", "must be the id of an initiator group, got %q", v)
			}
			tg.Initiator = &n
		}
		if v := sub.Str("targetGroupAuthType"); v != "" {
			// democratic-csi's "None", "CHAP", "CHAP Mutual" become the API's NONE, CHAP, CHAP_MUTUAL.
			tg.AuthMethod = strings.ToUpper(strings.ReplaceAll(v, " ", "_"))
			switch tg.AuthMethod {
			case "NONE", "CHAP", "CHAP_MUTUAL":
			default:
				r.Add(key+".targetGroupAuthType", "must be None, CHAP or CHAP Mutual, got %q", v)
			}
		}
		if v := sub.Str("targetGroupAuthGroup"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				r.Add(key+".targetGroupAuthGroup", "must be the id of an auth group, got %q", v)
			} else if n > 0 {
				tg.Auth = &n
			}
		}
		for _, p := range sub.Problems() {
			r.Add(key+"."+p.Key, "%s", p.Msg)
		}
		s.targetGroups = append(s.targetGroups, tg)
	}
	s.extent["insecure_tpc"] = r.Bool("iscsi.extentInsecureTpc", true)
	s.extent["xen"] = r.Bool("iscsi.extentXenCompat", false)
	s.extent["pblocksize"] = r.Bool("iscsi.extentDisablePhysicalBlocksize", true)
	bs := 512
	if v := r.Str("iscsi.extentBlocksize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || (n != 512 && n != 1024 && n != 2048 && n != 4096) {
			r.Add("iscsi.extentBlocksize", "must be 512, 1024, 2048 or 4096, got %q", v)
		}
		bs = n
	}
	s.extent["blocksize"] = bs
	rpm := r.Str("iscsi.extentRpm")
	if rpm == "" {
		rpm = "SSD"
	}
	s.extent["rpm"] = rpm
	if v := r.Str("iscsi.extentAvailThreshold"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 && n <= 100 {
			s.extent["avail_threshold"] = n
		} else {
			r.Add("iscsi.extentAvailThreshold", "must be a percentage from 1 to 100, got %q", v)
		}
	}
	s.extentComment = template(r, "iscsi.extentCommentTemplate")
	if parseHostAccess(r, "iscsi") {
		s.hostAccess = engine.IQN
		for i, g := range s.targetGroups {
			if g.Initiator != nil {
				r.Add("iscsi.targetGroups["+strconv.Itoa(i)+"].targetGroupInitiatorGroup", "is set, and iscsi.hostAccess: allowList gives each target an initiator group of its own holding the nodes it is published to: leave it out")
			}
		}
	}
	return s
}

func parseNVMeoF(r *config.Reader) shareSettings {
	s := shareSettings{nvmeAllowAnyHost: r.Bool("nvmeof.allowAnyHost", true)}
	if t := r.Str("nvmeof.transport"); t != "" {
		s.nvmeTransports = append(s.nvmeTransports, t)
	}
	s.nvmeTransports = append(s.nvmeTransports, r.List("nvmeof.transports")...)
	if len(s.nvmeTransports) == 0 {
		r.Add("nvmeof.transports", "required: where nodes connect, e.g. tcp://192.168.1.10:4420")
	}
	for _, t := range s.nvmeTransports {
		if !strings.Contains(t, "://") {
			r.Add("nvmeof.transports", "%q: want <transport>://<address>:<port>, e.g. tcp://192.168.1.10:4420", t)
		}
	}
	portsKey := nvmePortsKey(r)
	for _, p := range r.List(portsKey) {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			r.Add(portsKey, "must be nvmet.port ids (numbers), got %q", p)
			continue
		}
		s.nvmePorts = append(s.nvmePorts, n)
	}
	// democratic-csi next's subsystemTemplate and namespaceTemplate: extra
	// fields of nvmet.subsys.create and nvmet.namespace.create (qid_max,
	// pi_enable, nsid, ...); the fields switchyard sets itself are refused
	// rather than silently overridden.
	s.nvmeSubsysFields = apiFields(r, "nvmeof.subsystemTemplate", "name", "allow_any_host")
	s.nvmeNSFields = apiFields(r, "nvmeof.namespaceTemplate", "subsys_id", "device_type", "device_path")
	parseNaming(r, "nvmeof", &s)
	if parseHostAccess(r, "nvmeof") {
		s.hostAccess = engine.NQN
		if _, given := r.Tree().Lookup("nvmeof.allowAnyHost"); given && s.nvmeAllowAnyHost {
			r.Add("nvmeof.allowAnyHost", "is true, which lets every host in; nvmeof.hostAccess: allowList needs false (or leave it out)")
		}
		s.nvmeAllowAnyHost = false
	}
	s.nvmeDHCHAP = engine.ParseDHCHAP(r, "nvmeof", s.hostAccess == engine.NQN)
	return s
}

// nvmePortsKey is where the nvmet.port ids are: nvmeof.portIds, or
// democratic-csi next's name for them, nvmeof.ports. Both at once is a
// problem: they would disagree sooner or later.
func nvmePortsKey(r *config.Reader) string {
	_, ids := r.Tree().Lookup("nvmeof.portIds")
	_, ports := r.Tree().Lookup("nvmeof.ports")
	switch {
	case ids && ports:
		r.Add("nvmeof.ports", "is democratic-csi's name for nvmeof.portIds: set one of them")
	case ports:
		return "nvmeof.ports"
	}
	return "nvmeof.portIds"
}

// apiFields reads key, a map of extra fields for a create call, refusing
// those switchyard sets itself (reserved).
func apiFields(r *config.Reader, key string, reserved ...string) map[string]any {
	v, ok := r.Tree().Lookup(key)
	if !ok || v == nil {
		return nil
	}
	m := r.Tree().Sub(key)
	if m == nil {
		r.Add(key, "must be a map of fields of the TrueNAS API call, e.g. {qid_max: 16}")
		return nil
	}
	out := map[string]any{}
	for k, x := range m {
		if slices.Contains(reserved, k) {
			r.Add(key+"."+k, "is set by switchyard (%s): leave it out", strings.Join(reserved, ", "))
			continue
		}
		out[k] = x
	}
	return out
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

// withFields is a create call's arguments: the configured extra fields
// (nvmeof.subsystemTemplate, namespaceTemplate) under switchyard's own.
func withFields(extra, own map[string]any) map[string]any {
	out := make(map[string]any, len(extra)+len(own))
	for k, v := range extra {
		out[k] = v
	}
	for k, v := range own {
		out[k] = v
	}
	return out
}
