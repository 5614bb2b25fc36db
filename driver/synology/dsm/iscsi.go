package dsm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// LUN is a LUN as SYNO.Core.ISCSI.LUN lists it.
type LUN struct {
	UUID        string `json:"uuid"`
	ID          int    `json:"lun_id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Location    string `json:"location"`
	Size        int64  `json:"size"`
	Status      string `json:"status"`
}

// Deleting reports a LUN DSM is deleting in the background.
func (l LUN) Deleting() bool { return l.Status == "deleting" }

// Snapshot is a LUN snapshot.
type Snapshot struct {
	UUID        string `json:"uuid"`
	Name        string `json:"name"`
	Description string `json:"description"`
	ParentUUID  string `json:"parent_uuid"`
	TotalSize   int64  `json:"total_size"`
	Time        int64  `json:"time"`
}

// Target is an iSCSI target with its mappings.
type Target struct {
	ID         int    `json:"target_id"`
	Name       string `json:"name"`
	IQN        string `json:"iqn"`
	MappedLuns []struct {
		LunUUID      string `json:"lun_uuid"`
		MappingIndex int    `json:"mapping_index"`
	} `json:"mapped_luns"`
}

// quote is a JSON string, as DSM reads string parameters.
func quote(s string) string { return strconv.Quote(s) }

// Params are extra parameters (from lunTemplate, targetTemplate,
// lunSnapshotTemplate): scalars as text, others as JSON.
type Params map[string]any

func (p Params) into(v url.Values) {
	for k, x := range p {
		switch t := x.(type) {
		case string:
			v.Set(k, t)
		case nil:
		default:
			b, _ := json.Marshal(t)
			v.Set(k, strings.Trim(string(b), `"`))
		}
	}
}

// ListLUNs lists every LUN.
func (c *Client) ListLUNs(ctx context.Context) ([]LUN, error) {
	var d struct {
		LUNs []LUN `json:"luns"`
	}
	err := c.Call(ctx, "SYNO.Core.ISCSI.LUN", "list", 1, url.Values{}, &d)
	return d.LUNs, err
}

// LUNByName finds a LUN by name (nil when there is none).
func (c *Client) LUNByName(ctx context.Context, name string) (*LUN, error) {
	luns, err := c.ListLUNs(ctx)
	if err != nil {
		return nil, err
	}
	for i := range luns {
		if luns[i].Name == name {
			return &luns[i], nil
		}
	}
	return nil, nil
}

// CreateLUN makes a LUN; extra (lunTemplate) goes first, so name,
// location and size win.
func (c *Client) CreateLUN(ctx context.Context, name, location string, size int64, extra Params) (string, error) {
	v := url.Values{}
	extra.into(v)
	v.Set("name", name)
	v.Set("location", location)
	v.Set("size", strconv.FormatInt(size, 10))
	var d struct {
		UUID string `json:"uuid"`
	}
	err := c.Call(ctx, "SYNO.Core.ISCSI.LUN", "create", 1, v, &d)
	return d.UUID, err
}

// ResizeLUN grows a LUN.
func (c *Client) ResizeLUN(ctx context.Context, uuid string, size int64) error {
	return c.Call(ctx, "SYNO.Core.ISCSI.LUN", "set", 1, url.Values{"uuid": {quote(uuid)}, "new_size": {strconv.FormatInt(size, 10)}}, nil)
}

// DeleteLUN starts deleting a LUN (DSM finishes in the background).
func (c *Client) DeleteLUN(ctx context.Context, uuid string) error {
	return c.Call(ctx, "SYNO.Core.ISCSI.LUN", "delete", 1, url.Values{"uuid": {quote("")}, "uuids": {"[" + quote(uuid) + "]"}, "is_soft_feas_ignored": {"true"}}, nil)
}

// MapLUN maps a LUN into a target.
func (c *Client) MapLUN(ctx context.Context, uuid string, targetID int) error {
	return c.Call(ctx, "SYNO.Core.ISCSI.LUN", "map_target", 1, url.Values{"uuid": {quote(uuid)}, "target_ids": {fmt.Sprintf("[%d]", targetID)}}, nil)
}

// CloneLUN copies a LUN into a new LUN named name.
func (c *Client) CloneLUN(ctx context.Context, srcUUID, name, location, desc string) error {
	v := url.Values{"src_lun_uuid": {quote(srcUUID)}, "dst_lun_name": {name}, "dst_location": {location}, "is_same_pool": {"true"}, "clone_type": {"switchyard"}}
	if desc != "" {
		v.Set("description", desc)
	}
	return c.Call(ctx, "SYNO.Core.ISCSI.LUN", "clone", 1, v, nil)
}

// CloneSnapshot makes a LUN named name from a snapshot of srcUUID.
func (c *Client) CloneSnapshot(ctx context.Context, srcUUID, snapUUID, name, desc string) error {
	v := url.Values{"src_lun_uuid": {quote(srcUUID)}, "snapshot_uuid": {quote(snapUUID)}, "cloned_lun_name": {name}, "clone_type": {"switchyard"}}
	if desc != "" {
		v.Set("description", desc)
	}
	return c.Call(ctx, "SYNO.Core.ISCSI.LUN", "clone_snapshot", 1, v, nil)
}

// TakeSnapshot snapshots a LUN; the description carries the CSI name.
func (c *Client) TakeSnapshot(ctx context.Context, lunUUID, desc string, extra Params) error {
	v := url.Values{}
	extra.into(v)
	v.Set("src_lun_uuid", quote(lunUUID))
	v.Set("taken_by", "switchyard")
	v.Set("description", desc)
	return c.Call(ctx, "SYNO.Core.ISCSI.LUN", "take_snapshot", 1, v, nil)
}

// ListSnapshots lists a LUN's snapshots.
func (c *Client) ListSnapshots(ctx context.Context, lunUUID string) ([]Snapshot, error) {
	var d struct {
		Snapshots []Snapshot `json:"snapshots"`
	}
	err := c.Call(ctx, "SYNO.Core.ISCSI.LUN", "list_snapshot", 1, url.Values{"src_lun_uuid": {quote(lunUUID)}}, &d)
	return d.Snapshots, err
}

// DeleteSnapshot deletes a LUN snapshot.
func (c *Client) DeleteSnapshot(ctx context.Context, uuid string) error {
	return c.Call(ctx, "SYNO.Core.ISCSI.LUN", "delete_snapshot", 1, url.Values{"snapshot_uuid": {quote(uuid)}, "deleted_by": {"switchyard"}}, nil)
}

// ListTargets lists targets with their mappings.
func (c *Client) ListTargets(ctx context.Context) ([]Target, error) {
	var d struct {
		Targets []Target `json:"targets"`
	}
	err := c.Call(ctx, "SYNO.Core.ISCSI.Target", "list", 1, url.Values{"additional": {`["mapped_lun"]`}}, &d)
	return d.Targets, err
}

// TargetByIQN finds a target (nil when there is none).
func (c *Client) TargetByIQN(ctx context.Context, iqn string) (*Target, error) {
	ts, err := c.ListTargets(ctx)
	if err != nil {
		return nil, err
	}
	for i := range ts {
		if strings.EqualFold(ts[i].IQN, iqn) {
			return &ts[i], nil
		}
	}
	return nil, nil
}

// CreateTarget makes a target; extra (targetTemplate, CHAP) goes first.
func (c *Client) CreateTarget(ctx context.Context, name, iqn string, extra Params) (int, error) {
	v := url.Values{}
	extra.into(v)
	v.Set("name", name)
	v.Set("iqn", iqn)
	var d struct {
		ID int `json:"target_id"`
	}
	err := c.Call(ctx, "SYNO.Core.ISCSI.Target", "create", 1, v, &d)
	return d.ID, err
}

// DeleteTarget deletes a target.
func (c *Client) DeleteTarget(ctx context.Context, id int) error {
	return c.Call(ctx, "SYNO.Core.ISCSI.Target", "delete", 1, url.Values{"target_id": {quote(strconv.Itoa(id))}}, nil)
}

// FreeBytes is a storage volume's free space.
func (c *Client) FreeBytes(ctx context.Context, volumePath string) (int64, error) {
	var d struct {
		Volume struct {
			Free json.Number `json:"size_free_byte"`
		} `json:"volume"`
	}
	if err := c.Call(ctx, "SYNO.Core.Storage.Volume", "get", 1, url.Values{"volume_path": {volumePath}}, &d); err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.Trim(d.Volume.Free.String(), `"`), 10, 64)
	if err != nil {
		return 0, &Error{API: "SYNO.Core.Storage.Volume", Method: "get", Code: -1, Detail: "size_free_byte is not a number: " + d.Volume.Free.String()}
	}
	return n, nil
}
