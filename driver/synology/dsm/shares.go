package dsm

import (
	"context"
	"encoding/json"
	"net/url"
)

// Share is a shared folder.
type Share struct {
	Name    string `json:"name"`
	UUID    string `json:"uuid"`
	VolPath string `json:"vol_path"`
	Desc    string `json:"desc"`
	QuotaMB int64  `json:"quota_value"`
}

// ShareSnapshot is a shared folder's snapshot; Time is its name.
type ShareSnapshot struct {
	Time string `json:"time"`
	Desc string `json:"desc"`
	UUID string `json:"ruuid"`
}

// NFSRule is one client rule of a share's NFS privileges.
type NFSRule struct {
	Client     string `json:"client"`
	Privilege  string `json:"privilege"`
	RootSquash string `json:"root_squash"`
	Async      bool   `json:"async"`
	Crossmnt   bool   `json:"crossmnt"`
	Insecure   bool   `json:"insecure"`
	Security   struct {
		Sys bool `json:"sys"`
	} `json:"security_flavor"`
}

type shareInfo struct {
	Name       string `json:"name"`
	VolPath    string `json:"vol_path"`
	Desc       string `json:"desc,omitempty"`
	Quota      *int64 `json:"share_quota,omitempty"`
	NameOrg    string `json:"name_org,omitempty"`
	RecycleBin bool   `json:"enable_recycle_bin"`
	RecycleAdm bool   `json:"recycle_bin_admin_only"`
	EnableCOW  bool   `json:"enable_share_cow"`
	Encryption int    `json:"encryption"`
}

func (si shareInfo) encode() string {
	b, _ := json.Marshal(si)
	return string(b)
}

const shareAdditional = `["encryption","enable_share_cow","recyclebin","support_snapshot","share_quota"]`

// GetShare reads a share (a *Error with code 402 when there is none).
func (c *Client) GetShare(ctx context.Context, name string) (*Share, error) {
	var s Share
	if err := c.Call(ctx, "SYNO.Core.Share", "get", 1, url.Values{"name": {quote(name)}, "additional": {shareAdditional}}, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// ListShares lists every share.
func (c *Client) ListShares(ctx context.Context) ([]Share, error) {
	var d struct {
		Shares []Share `json:"shares"`
	}
	err := c.Call(ctx, "SYNO.Core.Share", "list", 1, url.Values{"additional": {shareAdditional}}, &d)
	return d.Shares, err
}

// CreateShare makes a share on volPath with a quota in MB.
func (c *Client) CreateShare(ctx context.Context, name, volPath, desc string, quotaMB int64) error {
	si := shareInfo{Name: name, VolPath: volPath, Desc: desc, Quota: &quotaMB}
	return c.Call(ctx, "SYNO.Core.Share", "create", 1, url.Values{"name": {quote(name)}, "shareinfo": {si.encode()}}, nil)
}

// CloneShare copies share src (or its snapshot, when snap is not "") into
// a new share.
func (c *Client) CloneShare(ctx context.Context, name, src, snap, volPath, desc string, quotaMB int64) error {
	si := shareInfo{Name: name, VolPath: volPath, Desc: desc, NameOrg: src, Quota: &quotaMB}
	v := url.Values{"name": {quote(name)}, "shareinfo": {si.encode()}}
	if snap != "" {
		v.Set("snapshot", quote(snap))
	}
	return c.Call(ctx, "SYNO.Core.Share", "clone", 1, v, nil)
}

// SetShareQuota sets a share's quota (MB).
func (c *Client) SetShareQuota(ctx context.Context, name, volPath string, quotaMB int64) error {
	si := shareInfo{Name: name, VolPath: volPath, Quota: &quotaMB}
	return c.Call(ctx, "SYNO.Core.Share", "set", 1, url.Values{"name": {quote(name)}, "shareinfo": {si.encode()}}, nil)
}

// DeleteShare deletes a share and its snapshots.
func (c *Client) DeleteShare(ctx context.Context, name string) error {
	return c.Call(ctx, "SYNO.Core.Share", "delete", 1, url.Values{"name": {"[" + quote(name) + "]"}}, nil)
}

// SnapshotShare snapshots a share; the answer is the snapshot's name.
func (c *Client) SnapshotShare(ctx context.Context, name, desc string) (string, error) {
	info, _ := json.Marshal(map[string]any{"desc": desc, "lock": true})
	var t string
	err := c.Call(ctx, "SYNO.Core.Share.Snapshot", "create", 1, url.Values{"name": {quote(name)}, "snapinfo": {string(info)}}, &t)
	return t, err
}

// ListShareSnapshots lists a share's snapshots.
func (c *Client) ListShareSnapshots(ctx context.Context, name string) ([]ShareSnapshot, error) {
	var d struct {
		Snapshots []ShareSnapshot `json:"snapshots"`
	}
	err := c.Call(ctx, "SYNO.Core.Share.Snapshot", "list", 2, url.Values{"name": {quote(name)}, "additional": {`["desc","lock","ruuid","snap_size"]`}}, &d)
	return d.Snapshots, err
}

// DeleteShareSnapshot deletes one snapshot of a share.
func (c *Client) DeleteShareSnapshot(ctx context.Context, name, snap string) error {
	return c.Call(ctx, "SYNO.Core.Share.Snapshot", "delete", 1, url.Values{"name": {quote(name)}, "snapshots": {"[" + quote(snap) + "]"}}, nil)
}

// SaveNFSRules replaces a share's NFS privileges.
func (c *Client) SaveNFSRules(ctx context.Context, name string, rules []NFSRule) error {
	for i := range rules {
		rules[i].Security.Sys = true
	}
	b, _ := json.Marshal(rules)
	return c.Call(ctx, "SYNO.Core.FileServ.NFS.SharePrivilege", "save", 1, url.Values{"share_name": {quote(name)}, "rule": {string(b)}}, nil)
}

// SetSharePermissions gives local users read/write access to a share.
func (c *Client) SetSharePermissions(ctx context.Context, name string, users []string) error {
	var perms []map[string]any
	for _, u := range users {
		perms = append(perms, map[string]any{"name": u, "is_readonly": false, "is_writable": true, "is_deny": false})
	}
	b, _ := json.Marshal(perms)
	return c.Call(ctx, "SYNO.Core.Share.Permission", "set", 1, url.Values{"name": {quote(name)}, "user_group_type": {quote("local_user")}, "permissions": {string(b)}}, nil)
}
