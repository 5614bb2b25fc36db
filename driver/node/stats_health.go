package node

// Node-side volume health (CSI 1.13's NodeGetVolumeHealth, which replaced
// NodeGetVolumeStats' volume_condition): what this node sees of a staged or
// published volume that the controller cannot see (a stale network mount, a
// block device that went away, a filesystem the kernel remounted read-only
// after I/O errors).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Reasons reported by NodeGetVolumeHealth (CamelCase, as the spec asks).
const (
	ReasonStaleMount      = "StaleMount"
	ReasonNotMounted      = "NotMounted"
	ReasonReadOnlyRemount = "ReadOnlyRemount"
	ReasonDeviceMissing   = "DeviceMissing"
)

// healthSyscalls are the kernel calls the checks make; unit tests replace
// them to produce errors a test host cannot (ESTALE needs an NFS server).
type healthSyscalls struct {
	statfs     func(path string) error
	deviceSize func(path string) (int64, error)
}

var healthSys = healthSyscalls{
	statfs: func(p string) error {
		var st unix.Statfs_t
		return unix.Statfs(p, &st)
	},
	deviceSize: blockDeviceSize,
}

// NodeGetVolumeHealth implements csi.NodeServer. It checks the publish
// path and the staging path (from the request, else from the node record).
// An empty list means nothing wrong is known; a volume this node has no
// record of and no path for is NOT_FOUND.
func (s *Service) NodeGetVolumeHealth(_ context.Context, req *csi.NodeGetVolumeHealthRequest) (*csi.NodeGetVolumeHealthResponse, error) {
	id := req.GetVolumeId()
	if err := requireID(id); err != nil {
		return nil, err
	}
	rec, err := s.loadRecord(id)
	if err != nil {
		return nil, err
	}
	staging := req.GetStagingTargetPath()
	if staging == "" && rec != nil {
		staging = rec.StagingPath
	}
	publish := req.GetVolumePublishPath()
	if staging == "" && publish == "" {
		return nil, status.Errorf(codes.NotFound, "volume %s is not staged on this node (no node record) and the request names no path", id)
	}
	h := healthCheck{s: s, rec: rec}
	if staging != "" {
		h.checkPath(staging, false)
	}
	if publish != "" {
		h.checkPath(publish, true)
	}
	return &csi.NodeGetVolumeHealthResponse{VolumeHealth: &csi.VolumeHealth{VolumeId: id, HealthStatuses: h.entries()}}, nil
}

// healthCheck collects conditions; one entry per (status, reason), as the
// spec requires, with the messages of every path that shows it.
type healthCheck struct {
	s     *Service
	rec   *record
	order []string
	found map[string]*csi.VolumeHealth_VolumeHealthEntry
}

func (h *healthCheck) add(st csi.VolumeHealthErrorType, reason, msg string) {
	key := st.String() + "/" + reason
	if h.found == nil {
		h.found = map[string]*csi.VolumeHealth_VolumeHealthEntry{}
	}
	if e, ok := h.found[key]; ok {
		e.Message += "; " + msg
		return
	}
	h.found[key] = &csi.VolumeHealth_VolumeHealthEntry{Status: st, Reason: reason, Message: msg}
	h.order = append(h.order, key)
}

func (h *healthCheck) entries() []*csi.VolumeHealth_VolumeHealthEntry {
	out := make([]*csi.VolumeHealth_VolumeHealthEntry, 0, len(h.order))
	for _, k := range h.order {
		out = append(out, h.found[k])
	}
	return out
}

// block says whether the volume is raw block: from the record, else from
// what sits at the path (kubelet may ask after a lost state directory).
func (h *healthCheck) block(p string, published bool) bool {
	if h.rec != nil && h.rec.Capability.VolumeCapability != nil {
		return h.rec.volume().IsBlock()
	}
	if !published {
		_, err := os.Lstat(filepath.Join(p, StagedBlockDevice))
		mounted, _ := isMountPoint(h.s.host.Mounter, p)
		return err == nil && !mounted
	}
	fi, err := os.Stat(p)
	return err == nil && fi.Mode()&fs.ModeDevice != 0
}

func (h *healthCheck) checkPath(p string, published bool) {
	what := "staging path"
	if published {
		what = "publish path"
	}
	if h.block(p, published) {
		dev := p
		if !published {
			dev = filepath.Join(p, StagedBlockDevice)
		}
		h.checkDevice(dev, what)
		return
	}
	if err := healthSys.statfs(p); err != nil {
		switch {
		case isStale(err):
			h.add(csi.VolumeHealthErrorType_INACCESSIBLE, ReasonStaleMount,
				fmt.Sprintf("%s %s: the mount is stale (%s): its server or connection is gone; the pod must be restarted so the volume is staged again", what, p, errnoName(err)))
		case errors.Is(err, fs.ErrNotExist):
			h.add(csi.VolumeHealthErrorType_INACCESSIBLE, ReasonNotMounted, fmt.Sprintf("%s %s does not exist", what, p))
		default:
			h.add(csi.VolumeHealthErrorType_INACCESSIBLE, ReasonStaleMount, fmt.Sprintf("%s %s: statfs: %v", what, p, err))
		}
		return
	}
	mounted, corrupted, err := mountState(h.s.host.Mounter, p)
	switch {
	case err != nil:
		h.add(csi.VolumeHealthErrorType_UNKNOWN_VOLUME_HEALTH_TYPE, "MountTableUnreadable", fmt.Sprintf("%s %s: %v", what, p, err))
		return
	case corrupted:
		h.add(csi.VolumeHealthErrorType_INACCESSIBLE, ReasonStaleMount, fmt.Sprintf("%s %s: the mount is broken", what, p))
		return
	case !mounted:
		h.add(csi.VolumeHealthErrorType_INACCESSIBLE, ReasonNotMounted,
			fmt.Sprintf("%s %s is not a mount point: the volume's mount is gone (unmounted behind the driver's back, or the node rebooted)", what, p))
		return
	}
	if !h.wantsWritable(p, published) {
		return
	}
	ro, err := mountedReadOnly(h.s.host.Mounter, p)
	if err == nil && ro {
		h.add(csi.VolumeHealthErrorType_DEGRADED, ReasonReadOnlyRemount,
			fmt.Sprintf("%s %s is mounted read-only although the volume was mounted read-write (a filesystem remounts read-only after I/O errors; see the node's kernel log)", what, p))
	}
}

// wantsWritable says whether the node mounted p read-write: only then is a
// read-only mount a fault. Without a record the intent is unknown.
func (h *healthCheck) wantsWritable(p string, published bool) bool {
	if h.rec == nil {
		return false
	}
	if readerOnly(h.rec.Capability.GetAccessMode().GetMode()) {
		return false
	}
	if !published {
		return true
	}
	t, ok := h.rec.Targets[p]
	if !ok {
		return false
	}
	return !t.Readonly && !readerOnly(t.Capability.GetAccessMode().GetMode())
}

// checkDevice opens the block device: a removed device (an NVMe namespace
// or iSCSI LUN gone, the node of a bind-mounted device deleted) fails with
// ENOENT, ENXIO or ENODEV; a detached loop device reads as size 0.
func (h *healthCheck) checkDevice(dev, what string) {
	size, err := healthSys.deviceSize(dev)
	switch {
	case err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.ENODEV)):
		h.add(csi.VolumeHealthErrorType_INACCESSIBLE, ReasonDeviceMissing,
			fmt.Sprintf("%s %s: the block device is gone (%s): its target, LUN or namespace disconnected", what, dev, errnoName(err)))
	case err != nil:
		h.add(csi.VolumeHealthErrorType_INACCESSIBLE, ReasonDeviceMissing, fmt.Sprintf("%s %s: %v", what, dev, err))
	case size == 0:
		h.add(csi.VolumeHealthErrorType_INACCESSIBLE, ReasonDeviceMissing,
			fmt.Sprintf("%s %s: the block device has size 0 (detached from its backing store)", what, dev))
	}
}

// staleErrnos are what statfs returns on a mount whose server or daemon is
// gone: ESTALE (NFS), ENOTCONN (FUSE, CIFS), EHOSTDOWN, EIO.
var staleErrnos = []syscall.Errno{syscall.ESTALE, syscall.ENOTCONN, syscall.EHOSTDOWN, syscall.EIO}

func isStale(err error) bool {
	var e syscall.Errno
	return errors.As(err, &e) && slices.Contains(staleErrnos, e)
}

// errnoName is the errno's symbol ("ESTALE") for messages, or the error.
func errnoName(err error) string {
	var e syscall.Errno
	if errors.As(err, &e) {
		if n := unix.ErrnoName(e); n != "" {
			return n
		}
	}
	return strings.TrimSpace(err.Error())
}
