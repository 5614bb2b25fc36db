package zfsssh

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// NVMetState is a snapshot of the simulated nvmet target.
type NVMetState struct {
	Hosts      []string // host NQNs under /hosts
	Ports      []NVMetPort
	Subsystems []NVMetSubsystem
	// HostAuth holds the DH-HMAC-CHAP files of hosts under /hosts that
	// were written (nvmet_configfs.go); saveconfig does not keep them.
	HostAuth map[string]NVMetHostAuth
}

// NVMetPort is /ports/<ID>; Options.NVMetPorts seeds them.
type NVMetPort struct {
	ID         int
	Trtype     string // "tcp", "rdma", "loop", "fc"
	Adrfam     string // "ipv4", "ipv6", ...
	Traddr     string
	Trsvcid    string // the TCP port, e.g. "4420"
	Treq       string // default "not specified"
	Subsystems []string
}

// NVMetSubsystem is /subsystems/<NQN>.
type NVMetSubsystem struct {
	NQN          string
	Attr         map[string]string // allow_any_host, serial, version, model, ...
	AllowedHosts []string
	Namespaces   []NVMetNamespace
}

// NVMetNamespace is /subsystems/<NQN>/namespaces/<NSID>.
type NVMetNamespace struct {
	NSID     int
	Path     string // device path, e.g. /dev/zvol/tank/k8s/pvc-1
	UUID     string
	NGUID    string
	Enabled  bool
	ANAGroup int
}

const (
	configfsNVMet  = "/sys/kernel/config/nvmet"
	nvmetSaveFile  = "/etc/nvmet/config.json"
	maxNQNLen      = 223
	maxNSID        = 8192
	discoveryNQN   = "nqn.2014-08.org.nvmexpress.discovery"
	zeroNGUID      = "00000000-0000-0000-0000-000000000000"
	defaultTreq    = "not specified"
	nvmetClearFail = "subsystems present, not restoring"
)

// nvmetModel is the live nvmet configuration, persisted after each change
// in nvmetcli's own JSON format.
type nvmetModel struct {
	mu      sync.Mutex
	file    string
	st      NVMetState
	release string // the kernel release, the subsystems' default firmware
	saved   []byte
	prefs   map[string]string
}

func loadNVMet(file string, seed []NVMetPort, release string) (*nvmetModel, error) {
	m := &nvmetModel{file: file, release: release, prefs: map[string]string{"color_mode": "true", "loglevel_console": "info", "tree_max_depth": "0"}}
	if file != "" {
		data, err := readFileIfExists(file)
		if err != nil {
			return nil, err
		}
		if data != nil {
			var cfg map[string]any
			if err := json.Unmarshal(data, &cfg); err != nil {
				return nil, fmt.Errorf("state file %s: %w", file, err)
			}
			m.restore(cfg)
			m.saved = data
			return m, nil
		}
	}
	for _, p := range seed {
		if p.Treq == "" {
			p.Treq = defaultTreq
		}
		if p.Adrfam == "" {
			p.Adrfam = "ipv4"
		}
		p.Subsystems = append([]string(nil), p.Subsystems...)
		m.st.Ports = append(m.st.Ports, p)
	}
	return m, nil
}

func (m *nvmetModel) saveLocked() error {
	if m.file == "" {
		return nil
	}
	data, err := m.dumpJSON()
	if err != nil || bytes.Equal(data, m.saved) {
		return err
	}
	if err := writeFileAtomic(m.file, data); err != nil {
		return err
	}
	m.saved = data
	return nil
}

func (m *nvmetModel) save() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.saveLocked()
}

// NVMet returns a snapshot of the simulated nvmet target.
func (s *Server) NVMet() NVMetState {
	s.nvmet.mu.Lock()
	defer s.nvmet.mu.Unlock()
	return cloneJSON(s.nvmet.st)
}

func (m *nvmetModel) subsystem(nqn string) *NVMetSubsystem {
	for i := range m.st.Subsystems {
		if m.st.Subsystems[i].NQN == nqn {
			return &m.st.Subsystems[i]
		}
	}
	return nil
}

func (m *nvmetModel) port(id int) *NVMetPort {
	for i := range m.st.Ports {
		if m.st.Ports[i].ID == id {
			return &m.st.Ports[i]
		}
	}
	return nil
}

func (m *nvmetModel) hasHost(nqn string) bool {
	for _, h := range m.st.Hosts {
		if h == nqn {
			return true
		}
	}
	return false
}

func (s *NVMetSubsystem) namespace(nsid int) *NVMetNamespace {
	for i := range s.Namespaces {
		if s.Namespaces[i].NSID == nsid {
			return &s.Namespaces[i]
		}
	}
	return nil
}

func (m *nvmetModel) newSubsystem(nqn string) NVMetSubsystem {
	return NVMetSubsystem{NQN: nqn, Attr: map[string]string{
		"allow_any_host": "0", "cntlid_max": "65519", "cntlid_min": "1", "firmware": firmware(m.release),
		"ieee_oui": "0x000000", "model": "Linux", "pi_enable": "0", "qid_max": "128",
		"serial": randomHex(16), "version": "1.3",
	}}
}

// firmware is what the kernel reports: its release, cut to 8 characters.
func firmware(release string) string {
	if len(release) > 8 {
		return release[:8]
	}
	return release
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func remove(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// dump is nvmetcli's saveconfig document.
func (m *nvmetModel) dump() map[string]any {
	hosts := []any{}
	for _, h := range m.st.Hosts {
		hosts = append(hosts, map[string]any{"nqn": h})
	}
	ports := []any{}
	for _, p := range m.st.Ports {
		ports = append(ports, map[string]any{
			"addr":       map[string]any{"adrfam": p.Adrfam, "traddr": p.Traddr, "treq": p.Treq, "trsvcid": p.Trsvcid, "trtype": p.Trtype},
			"ana_groups": []any{},
			"param":      map[string]any{"inline_data_size": "-1", "pi_enable": "0"},
			"portid":     p.ID,
			"referrals":  []any{},
			"subsystems": append([]string{}, p.Subsystems...),
		})
	}
	subs := []any{}
	for _, s := range m.st.Subsystems {
		nss := []any{}
		for _, ns := range s.Namespaces {
			enable := 0
			if ns.Enabled {
				enable = 1
			}
			nss = append(nss, map[string]any{
				"ana":       map[string]any{"grpid": strconv.Itoa(ns.ANAGroup)},
				"ana_grpid": ns.ANAGroup,
				"device":    map[string]any{"nguid": ns.NGUID, "path": ns.Path, "uuid": ns.UUID},
				"enable":    enable,
				"nsid":      ns.NSID,
			})
		}
		attr := map[string]any{}
		for k, v := range s.Attr {
			attr[k] = v
		}
		subs = append(subs, map[string]any{
			"allowed_hosts": append([]string{}, s.AllowedHosts...),
			"attr":          attr,
			"namespaces":    nss,
			"nqn":           s.NQN,
		})
	}
	return map[string]any{"hosts": hosts, "ports": ports, "subsystems": subs}
}

// dumpJSON formats like Python's json.dumps(sort_keys=True, indent=2) + "\n".
func (m *nvmetModel) dumpJSON() ([]byte, error) {
	return marshalJSON(m.dump())
}

// restore loads a saveconfig document into an empty model (nvmetcli's
// restore clears the existing configuration first) and returns the
// non-fatal errors, as nvmetcli prints them.
func (m *nvmetModel) restore(cfg map[string]any) []string {
	m.st = NVMetState{}
	var errs []string
	for i, h := range list(cfg["hosts"]) {
		nqn := str(mapOf(h)["nqn"])
		if nqn == "" {
			errs = append(errs, fmt.Sprintf("'nqn' not defined in host %d, skipped", i))
			continue
		}
		if !m.hasHost(nqn) {
			m.st.Hosts = append(m.st.Hosts, nqn)
		}
	}
	for i, raw := range list(cfg["subsystems"]) {
		t := mapOf(raw)
		nqn := str(t["nqn"])
		if nqn == "" {
			errs = append(errs, fmt.Sprintf("'nqn' not defined in subsystem %d, skipped", i))
			continue
		}
		s := m.newSubsystem(nqn)
		for k, v := range mapOf(t["attr"]) {
			s.Attr[k] = str(v)
		}
		for _, h := range list(t["allowed_hosts"]) {
			s.AllowedHosts = append(s.AllowedHosts, str(h))
		}
		for _, rn := range list(t["namespaces"]) {
			n := mapOf(rn)
			nsid, err := strconv.Atoi(str(n["nsid"]))
			if err != nil {
				errs = append(errs, "'nsid' not defined for Namespace, skipped")
				continue
			}
			dev := mapOf(n["device"])
			ns := NVMetNamespace{NSID: nsid, Path: str(dev["path"]), UUID: str(dev["uuid"]), NGUID: str(dev["nguid"]), ANAGroup: 1}
			if ns.NGUID == "" {
				ns.NGUID = zeroNGUID
			}
			if g, err := strconv.Atoi(str(n["ana_grpid"])); err == nil {
				ns.ANAGroup = g
			}
			ns.Enabled = str(n["enable"]) == "1"
			s.Namespaces = append(s.Namespaces, ns)
		}
		m.st.Subsystems = append(m.st.Subsystems, s)
	}
	for i, raw := range list(cfg["ports"]) {
		t := mapOf(raw)
		id, err := strconv.Atoi(str(t["portid"]))
		if err != nil {
			errs = append(errs, fmt.Sprintf("'portid' not defined in port %d, skipped", i))
			continue
		}
		a := mapOf(t["addr"])
		p := NVMetPort{ID: id, Trtype: str(a["trtype"]), Adrfam: str(a["adrfam"]), Traddr: str(a["traddr"]), Trsvcid: str(a["trsvcid"]), Treq: str(a["treq"])}
		for _, s := range list(t["subsystems"]) {
			p.Subsystems = append(p.Subsystems, str(s))
		}
		m.st.Ports = append(m.st.Ports, p)
	}
	return errs
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// str renders JSON scalars as nvmetcli's configfs strings.
func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case nil:
		return ""
	}
	return strings.TrimSpace(fmt.Sprint(v))
}
