package engine

// ControllerModifyVolume (Kubernetes VolumeAttributesClass): the ZFS
// properties that change on a live dataset without moving data or
// remounting. A new value applies to blocks written from then on
// (compression, recordsize, copies, checksum, dedup) or at once (atime,
// sync, logbias, caches, snapdir).

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/echo"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// mutableProp is one property a VolumeAttributesClass may set.
type mutableProp struct {
	fsOnly bool // meaningless on a zvol (zfs refuses it there)
	valid  func(string) bool
	hint   string // the accepted values, for the error
}

func oneOf(vals ...string) func(string) bool {
	return func(v string) bool { return slices.Contains(vals, v) }
}

var (
	// compiled on first use, not at every start-up
	compressionRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(on|off|lzjb|zle|lz4|gzip|gzip-[1-9]|zstd|zstd-([1-9]|1[0-9])|zstd-fast|zstd-fast-([1-9]|10|[2-9]0|100|500|1000))$`)
	})
	onOff = oneOf("on", "off")
)

// mutableProps are the properties ModifyVolume changes on the zfs command
// line. A platform may narrow them (MutableProperties).
var mutableProps = map[string]mutableProp{
	"compression":    {valid: func(v string) bool { return compressionRE().MatchString(v) }, hint: "on, off, lz4, zle, lzjb, gzip, gzip-1..9, zstd, zstd-1..19, zstd-fast, zstd-fast-N"},
	"atime":          {fsOnly: true, valid: onOff, hint: "on, off"},
	"relatime":       {fsOnly: true, valid: onOff, hint: "on, off"},
	"sync":           {valid: oneOf("standard", "always", "disabled"), hint: "standard, always, disabled"},
	"recordsize":     {fsOnly: true, valid: validRecordsize, hint: "a power of two from 512 to 16M (e.g. 128K)"},
	"logbias":        {valid: oneOf("latency", "throughput"), hint: "latency, throughput"},
	"primarycache":   {valid: oneOf("all", "none", "metadata"), hint: "all, none, metadata"},
	"secondarycache": {valid: oneOf("all", "none", "metadata"), hint: "all, none, metadata"},
	"dedup":          {valid: oneOf("on", "off", "verify", "sha256", "sha256,verify", "sha512", "sha512,verify", "skein", "skein,verify", "blake3", "blake3,verify"), hint: "on, off, verify, sha256[,verify], sha512[,verify], skein[,verify], blake3[,verify]"},
	"checksum":       {valid: oneOf("on", "off", "fletcher2", "fletcher4", "sha256", "noparity", "sha512", "skein", "edonr", "blake3"), hint: "on, off, fletcher4, sha256, sha512, skein, edonr, blake3"},
	"copies":         {valid: oneOf("1", "2", "3"), hint: "1, 2, 3"},
	"snapdir":        {fsOnly: true, valid: oneOf("hidden", "visible"), hint: "hidden, visible"},
}

// fixedProps cannot change after a volume is made; naming them says why
// instead of "unknown".
var fixedProps = map[string]string{
	"volblocksize":    "is fixed when a zvol is made",
	"encryption":      "is fixed when a volume is made",
	"keyformat":       "is fixed when a volume is made (a key change is not a volume attribute)",
	"keylocation":     "is managed by the driver",
	"pbkdf2iters":     "is fixed when a volume is made",
	"casesensitivity": "is fixed when a filesystem is made",
	"normalization":   "is fixed when a filesystem is made",
	"utf8only":        "is fixed when a filesystem is made",
	"volsize":         "is the volume's capacity: resize the PVC instead",
	"refquota":        "is the volume's capacity: resize the PVC instead",
	"quota":           "is the volume's capacity: resize the PVC instead",
	"mountpoint":      "is managed by the driver",
}

func validRecordsize(v string) bool {
	n, err := zfs.ParseSize(v)
	return err == nil && n >= 512 && n <= 16<<20 && n&(n-1) == 0
}

// MutableProperties, on a Platform, narrows the properties ModifyVolume
// offers to those the platform can change (the TrueNAS API takes fewer
// than the command line).
type MutableProperties interface {
	MutableProperties() []string
}

// mutableNames are the properties this engine's volumes accept, sorted.
func (e *Engine) mutableNames() []string {
	var allowed []string
	if m, ok := e.plat.(MutableProperties); ok {
		allowed = m.MutableProperties()
	}
	var out []string
	for n, p := range mutableProps {
		if p.fsOnly && e.cfg.kind == volume {
			continue
		}
		if allowed != nil && !slices.Contains(allowed, n) {
			continue
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// mutableAssignments checks mutable_parameters (from CreateVolume or
// ControllerModifyVolume) and returns them as zfs properties in key order.
// Every refusal is INVALID_ARGUMENT naming the key and listing what this
// backend accepts.
func (e *Engine) mutableAssignments(params map[string]string) ([]zfs.Prop, error) {
	if len(params) == 0 {
		return nil, nil
	}
	names := e.mutableNames()
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]zfs.Prop, 0, len(keys))
	for _, k := range keys {
		v := params[k]
		p, known := mutableProps[k]
		switch {
		case fixedProps[k] != "":
			return nil, status.Errorf(codes.InvalidArgument, "mutable parameter %s %s; %s volumes can change: %s", echo.Quote(k), fixedProps[k], e.cfg.driver, strings.Join(names, ", "))
		case !known || !slices.Contains(names, k):
			return nil, status.Errorf(codes.InvalidArgument, "mutable parameter %s is not one %s %ss can change; they can change: %s", echo.Quote(k), e.cfg.driver, e.cfg.kind, strings.Join(names, ", "))
		case !p.valid(v):
			return nil, status.Errorf(codes.InvalidArgument, "mutable parameter %s: %s is not a valid value (%s)", k, echo.Quote(v), p.hint)
		}
		out = append(out, zfs.Prop{Name: k, Value: v})
	}
	return out, nil
}

// CheckMutableParameters is CreateVolume's check of mutable_parameters,
// before anything is made.
func (e *Engine) CheckMutableParameters(params map[string]string) error {
	_, err := e.mutableAssignments(params)
	return err
}

// SetMutableParameters applies a CreateVolume's mutable_parameters to the
// new dataset.
func (e *Engine) SetMutableParameters(ctx context.Context, ds string, params map[string]string) error {
	props, err := e.mutableAssignments(params)
	if err != nil || len(props) == 0 {
		return err
	}
	if err := e.zfs.Set(ctx, ds, props...); err != nil {
		return e.zfsErr(err, "setting "+propList(props)+" on "+ds)
	}
	return nil
}

// ControllerModifyVolume sets the VolumeAttributesClass's properties in one
// `zfs set` (all or none).
func (e *Engine) ControllerModifyVolume(ctx context.Context, req *csi.ControllerModifyVolumeRequest) (*csi.ControllerModifyVolumeResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	props, err := e.mutableAssignments(req.GetMutableParameters())
	if err != nil {
		return nil, err
	}
	ds, err := e.existingDataset(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(props) == 0 {
		return &csi.ControllerModifyVolumeResponse{}, nil
	}
	if err := e.zfs.Set(ctx, ds, props...); err != nil {
		if zfs.IsNotExist(err) {
			return nil, status.Errorf(codes.NotFound, "volume %s does not exist (no dataset %s)", id, ds)
		}
		return nil, e.zfsErr(err, "setting "+propList(props)+" on "+ds)
	}
	e.log.Info("volume modified", "volume", id, "properties", propList(props))
	return &csi.ControllerModifyVolumeResponse{}, nil
}

func propList(props []zfs.Prop) string {
	s := make([]string, len(props))
	for i, p := range props {
		s[i] = fmt.Sprintf("%s=%s", p.Name, p.Value)
	}
	return strings.Join(s, " ")
}

// existingDataset is the dataset of volume id, or NOT_FOUND when id is not
// one of this driver's or its dataset is missing (one zfs get).
func (e *Engine) existingDataset(ctx context.Context, id string) (string, error) {
	if !volumeIDOK(id) {
		return "", status.Errorf(codes.NotFound, "volume %s does not exist", echo.Quote(id))
	}
	ds := e.cfg.datasetName(id)
	if _, err := e.zfs.Get(ctx, ds, "type"); err != nil {
		if zfs.IsNotExist(err) {
			return "", status.Errorf(codes.NotFound, "volume %s does not exist: dataset %s is missing", id, ds)
		}
		return "", e.zfsErr(err, "reading "+ds)
	}
	return ds, nil
}
