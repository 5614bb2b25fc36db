package synology

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/synology/dsm"
	"github.com/switchyard-csi/switchyard/driver/volumeid"
)

// settings are a synology-* config, read once.
type settings struct {
	driver     string // synology-iscsi, synology-nfs or synology-smb
	instanceID string
	idHash     string // _private.csi.volume.idHash.strategy (iSCSI)
	conn       dsm.Config
	serialize  bool
	location   string // synology.volume, "/volume1"

	// iSCSI (democratic-csi's keys)
	portal, iface       string
	portals             []string
	baseIQN             string
	prefix, suffix      string
	lunTemplate         dsm.Params
	targetTemplate      dsm.Params
	lunSnapshotTemplate dsm.Params

	// shares
	shareHost  string
	clients    []string // nfs: shareAllowedHosts + shareAllowedNetworks
	rootSquash string   // nfs: no, root, all
	smbUsers   []string
}

// section is where a flavour's own keys are.
func section(driver string) string { return strings.TrimPrefix(driver, "synology-") }

// Validate reports every problem of a synology-* config, each naming its
// key.
func Validate(t config.Tree) []config.Problem {
	_, ps := parse(t)
	return ps
}

func parse(t config.Tree) (*settings, []config.Problem) {
	r := config.NewReader(t)
	s := &settings{driver: r.Str("driver"), instanceID: r.Str("instance_id")}
	switch s.driver {
	case DriverISCSI, DriverNFS, DriverSMB:
	default:
		r.Add("driver", "must be %s, %s or %s, got %q", DriverISCSI, DriverNFS, DriverSMB, s.driver)
	}
	strategy, err := volumeid.ParseStrategy(r.Str("_private.csi.volume.idHash.strategy"))
	if err != nil {
		r.Add("_private.csi.volume.idHash.strategy", "%v", err)
	}
	s.idHash = strategy
	c := &s.conn
	c.Protocol = strings.ToLower(r.Str("httpConnection.protocol"))
	if c.Protocol == "" {
		c.Protocol = "http"
	}
	if c.Protocol != "http" && c.Protocol != "https" {
		r.Add("httpConnection.protocol", "must be http or https, got %q", c.Protocol)
	}
	c.Host = r.Required("httpConnection.host", "the DSM address (name or IP)")
	c.Port = 5000
	if c.Protocol == "https" {
		c.Port = 5001
	}
	if p := r.Str("httpConnection.port"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			r.Add("httpConnection.port", "must be a TCP port (1-65535), got %q", p)
		}
		c.Port = n
	}
	c.Username = r.Required("httpConnection.username", "a DSM account in the administrators group")
	c.Password = r.Required("httpConnection.password", "the password of httpConnection.username")
	c.AllowInsecure = r.Bool("httpConnection.allowInsecure", false)
	c.Session = r.Str("httpConnection.session")
	if c.Session == "" {
		c.Session = "democratic-csi"
	}
	s.serialize = r.Bool("httpConnection.serialize", false)
	s.location = r.Str("synology.volume")
	if s.location == "" {
		s.location = "volume1"
	}
	if !strings.HasPrefix(s.location, "/") {
		s.location = "/" + s.location
	}
	switch s.driver {
	case DriverISCSI:
		s.parseISCSI(r, t)
	case DriverNFS, DriverSMB:
		s.parseShares(r)
	}
	return s, r.Problems()
}

func (s *settings) parseISCSI(r *config.Reader, t config.Tree) {
	s.portal = r.Str("iscsi.targetPortal")
	s.portals = r.List("iscsi.targetPortals")
	if s.portal == "" && len(s.portals) == 0 {
		r.Add("iscsi.targetPortal", "required: the address[:port] nodes log in to (or iscsi.targetPortals)")
	}
	s.iface = r.Str("iscsi.interface")
	s.baseIQN = r.Required("iscsi.baseiqn", `the IQN prefix of the targets, e.g. "iqn.2000-01.com.synology:csi."`)
	if s.baseIQN != "" && !strings.HasPrefix(strings.ToLower(s.baseIQN), "iqn.") {
		r.Add("iscsi.baseiqn", "must start with iqn., got %q", s.baseIQN)
	}
	s.prefix, s.suffix = r.Str("iscsi.namePrefix"), r.Str("iscsi.nameSuffix")
	for _, k := range []string{"iscsi.namePrefix", "iscsi.nameSuffix"} {
		if v := r.Str(k); v != "" && !validName(strings.ToLower(v), true) {
			r.Add(k, "may hold only letters, digits, '.', '_' and '-', got %q", v)
		}
	}
	s.lunTemplate = templateOf(r, t, "iscsi.lunTemplate")
	s.targetTemplate = templateOf(r, t, "iscsi.targetTemplate")
	s.lunSnapshotTemplate = templateOf(r, t, "iscsi.lunSnapshotTemplate")
	if p := checkCHAP(s.targetTemplate); p != "" {
		r.Add("iscsi.targetTemplate", "%s", p)
	}
}

// checkCHAP checks targetTemplate's CHAP settings as DSM would (auth_type
// 1 = CHAP, 2 = mutual CHAP; secrets of 12 to 16 characters), so a bad
// one is a config problem rather than DSM's 18990708 at the first volume.
func checkCHAP(t dsm.Params) string {
	at := fmt.Sprint(t["auth_type"])
	if t["auth_type"] == nil || at == "0" {
		return ""
	}
	if at != "1" && at != "2" {
		return fmt.Sprintf("auth_type must be 0 (none), 1 (CHAP) or 2 (mutual CHAP), got %s", at)
	}
	pairs := [][2]string{{"user", "password"}}
	if at == "2" {
		pairs = append(pairs, [2]string{"mutual_user", "mutual_password"})
	}
	for _, p := range pairs {
		u, _ := t[p[0]].(string)
		pw := fmt.Sprint(t[p[1]])
		if u == "" {
			return fmt.Sprintf("auth_type %s needs %s", at, p[0])
		}
		if t[p[1]] == nil || len(pw) < 12 || len(pw) > 16 {
			return fmt.Sprintf("auth_type %s needs %s of 12 to 16 characters (DSM's CHAP secret length)", at, p[1])
		}
	}
	return ""
}

// templateOf reads a map of DSM parameters (lunTemplate, ...).
func templateOf(r *config.Reader, t config.Tree, key string) dsm.Params {
	v, ok := t.Lookup(key)
	if !ok || v == nil {
		return dsm.Params{}
	}
	m := t.Sub(key)
	if m == nil {
		r.Add(key, "must be a map of DSM parameters")
		return dsm.Params{}
	}
	out := dsm.Params{}
	for k, x := range m {
		out[k] = x
	}
	return out
}

func (s *settings) parseShares(r *config.Reader) {
	sec := section(s.driver)
	s.shareHost = r.Required(sec+".shareHost", "the address nodes mount the shares from")
	s.prefix, s.suffix = r.Str(sec+".namePrefix"), r.Str(sec+".nameSuffix")
	for _, k := range []string{sec + ".namePrefix", sec + ".nameSuffix"} {
		if v := r.Str(k); v != "" && !validName(v, true) {
			r.Add(k, "may hold only letters, digits, '.', '_' and '-', got %q", v)
		}
	}
	if len(s.prefix)+len(s.suffix) > maxShareName-12 {
		r.Add(sec+".namePrefix", "with nameSuffix at most %d characters: DSM's share names have at most %d", maxShareName-12, maxShareName)
	}
	if s.driver == DriverNFS {
		s.clients = append(r.List("nfs.shareAllowedHosts"), r.List("nfs.shareAllowedNetworks")...)
		if len(s.clients) == 0 {
			s.clients = []string{"*"}
		}
		s.rootSquash = r.Str("nfs.rootSquash")
		if s.rootSquash == "" {
			s.rootSquash = "no"
		}
		if s.rootSquash != "no" && s.rootSquash != "root" && s.rootSquash != "all" {
			r.Add("nfs.rootSquash", "must be no, root or all, got %q", s.rootSquash)
		}
	} else {
		s.smbUsers = r.List("smb.shareUsers")
	}
}

// validName: letters, digits, '.', '_', '-' (DSM's LUN and share names);
// part allows a leading '.', '_' or '-' (a prefix or suffix).
func validName(s string, part bool) bool {
	for i, c := range s {
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (c != '.' && c != '_' && c != '-' || i == 0 && !part) {
			return false
		}
	}
	return s != ""
}
