package synology

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/synology/dsm"
	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// sizeUnit: volumes are made in whole MiB (share quotas are in MB).
const sizeUnit = 1 << 20

// checkCaps says why capabilities cannot be served ("" when they can):
// iSCSI volumes are mounted (ext3, ext4, xfs, btrfs) or raw blocks, and
// only raw blocks may be written by several nodes; shares are mounted.
func (d *Driver) checkCaps(caps []*csi.VolumeCapability) string {
	if len(caps) == 0 {
		return "volume_capabilities is required"
	}
	for _, c := range caps {
		mode := c.GetAccessMode().GetMode()
		if c.GetAccessMode() == nil {
			return "volume_capabilities: access_mode is required"
		}
		switch {
		case c.GetBlock() != nil:
			if !d.block() {
				return d.s.driver + " volumes are file systems: access type block is not offered"
			}
		case c.GetMount() != nil:
			fs := c.GetMount().GetFsType()
			if d.block() {
				if fs != "" && fs != "ext4" && fs != "ext3" && fs != "xfs" && fs != "btrfs" {
					return "fs_type " + strconv.Quote(fs) + " is not offered (ext4, ext3, xfs, btrfs)"
				}
				if mode == csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER {
					return "MULTI_NODE_MULTI_WRITER needs access type block on " + d.s.driver
				}
			} else if fs != "" && fs != "nfs" && fs != "cifs" && fs != "smb" {
				return "fs_type " + strconv.Quote(fs) + " is not offered by " + d.s.driver
			}
		default:
			return "volume_capabilities: access type (mount or block) is required"
		}
	}
	return ""
}

// templates merges a template of the config with the StorageClass
// parameter and the secret of the same name (YAML maps, later wins), as
// democratic-csi does.
func templates(base dsm.Params, name string, params, secrets map[string]string) (dsm.Params, error) {
	out := dsm.Params{}
	for k, v := range base {
		out[k] = v
	}
	for _, src := range []struct{ where, text string }{{"parameters." + name, params[name]}, {"secrets." + name, secrets[name]}} {
		if strings.TrimSpace(src.text) == "" {
			continue
		}
		t, err := config.Parse([]byte(src.text))
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%s is not a YAML map of DSM parameters: %v", src.where, err)
		}
		for k, v := range t {
			out[k] = v
		}
	}
	return out, nil
}

var placeholder = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\{\{\s*(name|parameters\.\[([^\]]+)\]|parameters\.([A-Za-z0-9_./-]+))\s*\}\}`)
}) // compiled on first use

// render fills a lunTemplate description's handlebars placeholders
// ({{ name }}, {{ parameters.[csi.storage.k8s.io/pvc/name] }}).
func render(desc, name string, params map[string]string) string {
	re := placeholder()
	return re.ReplaceAllStringFunc(desc, func(m string) string {
		g := re.FindStringSubmatch(m)
		switch {
		case g[1] == "name":
			return name
		case g[2] != "":
			return params[g[2]]
		default:
			return params[g[3]]
		}
	})
}

// provisioner is who made the volume, for the node.
func (d *Driver) provisioner() volumecontext.Provisioner {
	return volumecontext.Provisioner{Driver: d.s.driver, InstanceID: d.s.instanceID}
}

// page cuts a sorted listing by starting_token (an offset) and
// max_entries.
func page[T any](items []T, token string, maxEntries int32) ([]T, string, error) {
	start := 0
	if token != "" {
		n, err := strconv.Atoi(token)
		if err != nil || n < 0 || n > len(items) {
			return nil, "", status.Errorf(codes.Aborted, "starting_token %q is not a token this driver gave out", token)
		}
		start = n
	}
	end := len(items)
	if maxEntries > 0 && start+int(maxEntries) < end {
		end = start + int(maxEntries)
	}
	next := ""
	if end < len(items) {
		next = strconv.Itoa(end)
	}
	return items[start:end], next, nil
}

func sortVolumes(v []*csi.ListVolumesResponse_Entry) {
	sort.Slice(v, func(i, j int) bool { return v[i].GetVolume().GetVolumeId() < v[j].GetVolume().GetVolumeId() })
}

func sortSnapshots(v []*csi.ListSnapshotsResponse_Entry) {
	sort.Slice(v, func(i, j int) bool { return v[i].GetSnapshot().GetSnapshotId() < v[j].GetSnapshot().GetSnapshotId() })
}

// snapNameRE is democratic-csi's rule for snapshot names.
// Compiled on first use (package init stays cheap); MatchString keeps
// its callers unchanged.
var snapNameRE = lazyRegexp(sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_\-:.+]+$`) }))

type lazyRegexp func() *regexp.Regexp

func (l lazyRegexp) MatchString(s string) bool { return l().MatchString(s) }
