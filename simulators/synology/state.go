package synology

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// state is everything the simulated NAS keeps; it is saved as JSON after
// every change (the data of LUNs and shares lives in files beside it).
type state struct {
	Volumes   []*volume   `json:"volumes"`
	LUNs      []*lun      `json:"luns"`
	Snapshots []*snapshot `json:"snapshots"`
	Targets   []*target   `json:"targets"`
	Shares    []*share    `json:"shares"`
	NextLunID int         `json:"next_lun_id"`
	NextTgtID int         `json:"next_target_id"`
	NextSnap  int         `json:"next_snapshot_id"`
	NFS       nfsService  `json:"nfs"`
}

// volume is a DSM storage volume (/volume1), where LUNs and shares live.
type volume struct {
	Path   string `json:"path"`   // "/volume1"
	Size   int64  `json:"size"`   // bytes
	FSType string `json:"fstype"` // "btrfs" or "ext4"
}

// lun is an iSCSI LUN: a sparse file of Size bytes.
type lun struct {
	UUID        string      `json:"uuid"`
	ID          int         `json:"lun_id"`
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Type        string      `json:"type"` // BLUN, BLUN_THICK, THIN, ADV, FILE
	Location    string      `json:"location"`
	Size        int64       `json:"size"`
	DevAttribs  []devAttrib `json:"dev_attribs"`
	Created     int64       `json:"created"`
	// DeleteAt is set by delete: DSM removes LUNs in the background, so a
	// deleted LUN is listed (status "deleting") until then.
	DeleteAt int64 `json:"delete_at,omitempty"` // unix ms
}

type devAttrib struct {
	Attrib string `json:"dev_attrib"`
	Enable int    `json:"enable"`
}

// snapshot is a LUN snapshot: a copy of the LUN's data when it was taken.
type snapshot struct {
	UUID          string `json:"uuid"`
	ID            int    `json:"snapshot_id"`
	ParentUUID    string `json:"parent_uuid"`
	Name          string `json:"name"`
	Description   string `json:"description"`
	TakenBy       string `json:"taken_by"`
	Time          int64  `json:"time"`
	Size          int64  `json:"total_size"`
	Locked        bool   `json:"is_locked"`
	AppConsistent bool   `json:"is_app_consistent"`
}

// target is an iSCSI target with its LUN mappings.
type target struct {
	ID             int       `json:"target_id"`
	Name           string    `json:"name"`
	IQN            string    `json:"iqn"`
	AuthType       int       `json:"auth_type"` // 0 none, 1 CHAP, 2 mutual CHAP
	User           string    `json:"user,omitempty"`
	Password       string    `json:"password,omitempty"`
	MutualUser     string    `json:"mutual_user,omitempty"`
	MutualPassword string    `json:"mutual_password,omitempty"`
	MaxSessions    int       `json:"max_sessions"`
	Mapped         []mapping `json:"mapped"`
}

type mapping struct {
	LunUUID string `json:"lun_uuid"`
	Index   int    `json:"mapping_index"`
}

// share is a shared folder: a directory under its volume, with a quota,
// share snapshots, user permissions and NFS rules.
type share struct {
	Name        string            `json:"name"`
	UUID        string            `json:"uuid"`
	VolPath     string            `json:"vol_path"`
	Desc        string            `json:"desc"`
	QuotaMB     int64             `json:"quota_mb"`
	RecycleBin  bool              `json:"recycle_bin"`
	RecycleBinA bool              `json:"recycle_bin_admin_only"`
	Snapshots   []*shareSnapshot  `json:"snapshots"`
	Permissions map[string]string `json:"permissions"` // user → "rw", "ro", "deny"
	NFSRules    []nfsRule         `json:"nfs_rules"`
}

type shareSnapshot struct {
	Time string `json:"time"` // DSM's snapshot name, "GMT+00-2026.01.02-15.04.05"
	UUID string `json:"ruuid"`
	Desc string `json:"desc"`
	Lock bool   `json:"lock"`
	Size int64  `json:"snap_size"`
}

// nfsRule is one client rule of SYNO.Core.FileServ.NFS.SharePrivilege.
type nfsRule struct {
	Client     string `json:"client"`
	Privilege  string `json:"privilege"`   // "rw" or "ro"
	RootSquash string `json:"root_squash"` // "root", "no", "all", "admin"
	Async      bool   `json:"async"`
	Crossmnt   bool   `json:"crossmnt"`
	Insecure   bool   `json:"insecure"`
}

type nfsService struct {
	Enabled   bool `json:"enable_nfs"`
	EnabledV4 bool `json:"enable_nfs_v4"`
	MinorVer  int  `json:"enabled_minor_ver"`
}

func (st *state) volume(path string) *volume {
	for _, v := range st.Volumes {
		if v.Path == path {
			return v
		}
	}
	return nil
}

func (st *state) lunByUUID(uuid string) *lun {
	for _, l := range st.LUNs {
		if l.UUID == uuid {
			return l
		}
	}
	return nil
}

func (st *state) lunByName(name string) *lun {
	for _, l := range st.LUNs {
		if l.Name == name {
			return l
		}
	}
	return nil
}

func (st *state) snapshotByUUID(uuid string) *snapshot {
	for _, s := range st.Snapshots {
		if s.UUID == uuid {
			return s
		}
	}
	return nil
}

func (st *state) targetByID(id int) *target {
	for _, t := range st.Targets {
		if t.ID == id {
			return t
		}
	}
	return nil
}

func (st *state) share(name string) *share {
	for _, s := range st.Shares {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// used is what the volume at path has given out: LUN sizes and share
// quotas (a share without quota counts nothing).
func (st *state) used(path string) int64 {
	var n int64
	for _, l := range st.LUNs {
		if l.Location == path {
			n += l.Size
		}
	}
	for _, s := range st.Shares {
		if s.VolPath == path {
			n += s.QuotaMB << 20
		}
	}
	return n
}

// store saves the state in dir/state.json.
type store struct{ dir string }

func (s store) file() string { return filepath.Join(s.dir, "state.json") }

func (s store) load() (*state, bool, error) {
	raw, err := os.ReadFile(s.file())
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("synology: %w", err)
	}
	var st state
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, false, fmt.Errorf("synology: %s: %w", s.file(), err)
	}
	return &st, true, nil
}

func (s store) save(st *state) error {
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return s.write(raw)
}

// write replaces state.json with raw (through a rename: a crash leaves the
// old or the new state, never half of one).
func (s store) write(raw []byte) error {
	tmp := s.file() + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return fmt.Errorf("synology: %w", err)
	}
	return os.Rename(tmp, s.file())
}

// lunFile is where a LUN's data lives.
func (s store) lunFile(uuid string) string { return filepath.Join(s.dir, "luns", uuid+".img") }

// snapFile is where a LUN snapshot's data lives.
func (s store) snapFile(uuid string) string { return filepath.Join(s.dir, "snapshots", uuid+".img") }

// shareDir is the directory of a shared folder (its volume's path under
// the state directory: <dir>/volume1/<name>).
func (s store) shareDir(volPath, name string) string {
	return filepath.Join(s.dir, filepath.Base(volPath), name)
}

// shareSnapDir is where a share snapshot's files are kept.
func (s store) shareSnapDir(name, snapTime string) string {
	return filepath.Join(s.dir, "share-snapshots", name, snapTime)
}

func itoa(n int) string { return strconv.Itoa(n) }

func nowUnix(now func() time.Time) int64 { return now().Unix() }
