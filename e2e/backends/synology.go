package backends

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// SynologyHost is the DSM Web API simulator (switchyard-lab synology
// --kernel in the storage VM): LUNs served by LIO, shares by nfsd and
// Samba on the VM's loopback.
type SynologyHost struct {
	URL      string `json:"url"`                // http(s)://host:port for the driver
	CheckURL string `json:"checkURL,omitempty"` // for this process (default URL)
	User     string `json:"user"`               // an administrator; with --kernel also the SMB account
	Password string `json:"password"`
	Volume   string `json:"volume,omitempty"` // default /volume1
	// TargetHost is the address nodes mount shares and log in to targets
	// at (default 127.0.0.1: the simulator serves inside the VM node).
	TargetHost string `json:"targetHost,omitempty"`
	ISCSIPort  int    `json:"iscsiPort,omitempty"` // default 3260
}

// synology: one row per flavour of driver/synology, all on one DSM. The
// flavours never list each other's volumes: a LUN is listed only with its
// target under the connection's baseiqn, a share only with its flavour's
// description (switchyard synology-nfs / -smb). LUN and share names are
// the PVCs' names, unique in the cluster, so the rows need no name prefix.
func synology(driver, short string) Family {
	block := driver == "synology-iscsi"
	f := Family{
		Name: driver, Short: short, Filesystem: true, Block: block, NeedsVM: true, ExpandVisible: block, Snapshots: true,
		// iSCSI ids: 64 bytes; share ids: DSM's 32-character share names.
		// Snapshot ids are longer (/lun/<uuid>/<uuid> is 78 bytes,
		// /share/<name>/<GMT time> 66): they set the limit.
		MaxIDLen: map[bool]int{true: 78, false: 66}[block], OverLimit: "snapshot",
		Available: func(e *Env) (bool, string) {
			if e.Lab.Synology == nil {
				return false, "E2E_LAB_FILE describes no Synology DSM simulator (synology)"
			}
			return true, ""
		},
		Connection: func(e *Env, _ string) string { return synologyConnection(e.Lab.Synology, driver) },
		Leftovers: func(ctx context.Context, e *Env, conn string, made []string) ([]string, error) {
			return synologyLeftovers(ctx, e.Lab.Synology)
		},
	}
	if block {
		f.FSType = "ext4"
	}
	if driver == "synology-smb" {
		f.NodeStageSecret = func(e *Env) map[string]string {
			return map[string]string{"username": e.Lab.Synology.User, "password": e.Lab.Synology.Password}
		}
	}
	return f
}

func synologyConnection(h *SynologyHost, driver string) string {
	u, _ := url.Parse(h.URL)
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "5001"}[u.Scheme]
		port = or(port, "5000")
	}
	target := or(h.TargetHost, "127.0.0.1")
	var b strings.Builder
	fmt.Fprintf(&b, "driver: %s\ninstance_id: e2e\nhttpConnection:\n  protocol: %s\n  host: %s\n  port: %s\n  username: %s\n  password: %q\n",
		driver, u.Scheme, u.Hostname(), port, h.User, h.Password)
	if u.Scheme == "https" {
		b.WriteString("  allowInsecure: true\n") // the simulator's certificate is made per run
	}
	fmt.Fprintf(&b, "synology:\n  volume: %s\n", or(h.Volume, "/volume1"))
	switch driver {
	case "synology-iscsi":
		fmt.Fprintf(&b, "iscsi:\n  targetPortal: %s\n  baseiqn: iqn.2000-01.com.synology:e2e.\n  lunTemplate:\n    type: BLUN\n  targetTemplate:\n    auth_type: 0\n    max_sessions: 0\n",
			net.JoinHostPort(target, strconv.Itoa(orInt(h.ISCSIPort, 3260))))
	case "synology-nfs":
		fmt.Fprintf(&b, "nfs:\n  shareHost: %s\n  shareAllowedNetworks: [127.0.0.0/8]\n", target)
	case "synology-smb":
		fmt.Fprintf(&b, "smb:\n  shareHost: %s\n  shareUsers: [%s]\n", target, h.User)
	}
	return b.String()
}

// dsmCall is one DSM Web API call to entry.cgi (GET, _sid in the query).
func dsmCall(ctx context.Context, base, sid string, params map[string]string, data any) error {
	q := url.Values{}
	for k, v := range params {
		q.Set(k, v)
	}
	if sid != "" {
		q.Set("_sid", sid)
	}
	var env struct {
		Success bool `json:"success"`
		Error   struct {
			Code int `json:"code"`
		} `json:"error"`
		Data json.RawMessage `json:"data"`
	}
	if err := httpJSON(ctx, strings.TrimRight(base, "/")+"/webapi/entry.cgi?"+q.Encode(), nil, &env); err != nil {
		return err
	}
	if !env.Success {
		return fmt.Errorf("DSM %s %s: error code %d", params["api"], params["method"], env.Error.Code)
	}
	if data == nil || len(env.Data) == 0 {
		return nil
	}
	return json.Unmarshal(env.Data, data)
}

// synologyLeftovers lists every LUN, target, LUN snapshot, share and
// share snapshot on the DSM, as DSM's own API answers (datapath keeps
// those naming an id the spec made).
func synologyLeftovers(ctx context.Context, h *SynologyHost) ([]string, error) {
	base := or(h.CheckURL, h.URL)
	var login struct {
		SID string `json:"sid"`
	}
	if err := dsmCall(ctx, base, "", map[string]string{"api": "SYNO.API.Auth", "version": "6", "method": "login",
		"account": h.User, "passwd": h.Password, "session": "e2e-check", "format": "sid"}, &login); err != nil {
		return nil, fmt.Errorf("DSM login: %w", err)
	}
	sid := login.SID
	defer func() {
		_ = dsmCall(context.WithoutCancel(ctx), base, sid, map[string]string{"api": "SYNO.API.Auth", "version": "6", "method": "logout", "session": "e2e-check"}, nil)
	}()
	var left []string
	var luns struct {
		LUNs []struct{ UUID, Name string } `json:"luns"`
	}
	if err := dsmCall(ctx, base, sid, map[string]string{"api": "SYNO.Core.ISCSI.LUN", "version": "1", "method": "list"}, &luns); err != nil {
		return nil, err
	}
	for _, l := range luns.LUNs {
		left = append(left, "lun "+l.Name)
		var snaps struct {
			Snapshots []struct{ UUID string } `json:"snapshots"`
		}
		if err := dsmCall(ctx, base, sid, map[string]string{"api": "SYNO.Core.ISCSI.LUN", "version": "1", "method": "list_snapshot",
			"src_lun_uuid": strconv.Quote(l.UUID)}, &snaps); err != nil {
			return nil, err
		}
		for _, s := range snaps.Snapshots {
			left = append(left, "lun snapshot /lun/"+l.UUID+"/"+s.UUID+" of "+l.Name)
		}
	}
	var targets struct {
		Targets []struct{ IQN string } `json:"targets"`
	}
	if err := dsmCall(ctx, base, sid, map[string]string{"api": "SYNO.Core.ISCSI.Target", "version": "1", "method": "list"}, &targets); err != nil {
		return nil, err
	}
	for _, t := range targets.Targets {
		left = append(left, "target "+t.IQN)
	}
	var shares struct {
		Shares []struct{ Name string } `json:"shares"`
	}
	if err := dsmCall(ctx, base, sid, map[string]string{"api": "SYNO.Core.Share", "version": "1", "method": "list"}, &shares); err != nil {
		return nil, err
	}
	for _, sh := range shares.Shares {
		left = append(left, "share "+sh.Name)
		var snaps struct {
			Snapshots []struct{ Time string } `json:"snapshots"`
		}
		if err := dsmCall(ctx, base, sid, map[string]string{"api": "SYNO.Core.Share.Snapshot", "version": "2", "method": "list",
			"name": strconv.Quote(sh.Name)}, &snaps); err != nil {
			return nil, err
		}
		for _, s := range snaps.Snapshots {
			left = append(left, "share snapshot /share/"+sh.Name+"/"+s.Time)
		}
	}
	return left, nil
}
