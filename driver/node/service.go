package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	mount "k8s.io/mount-utils"
	utilexec "k8s.io/utils/exec"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// Options configure a Service.
type Options struct {
	Exec    utilexec.Interface // nil → real exec
	Mounter mount.Interface    // nil → mount.New("")
	// StateDir is where per-volume node records are persisted (JSON);
	// required. It must survive restarts of the plugin (a hostPath).
	StateDir string
	// NodeInfo answers NodeGetInfo; supplied by the front end (proxy or
	// standalone), which knows the node id and topology. Required.
	NodeInfo func(ctx context.Context) (*csi.NodeGetInfoResponse, error)
	// Capabilities advertised by NodeGetCapabilities; nil → STAGE_UNSTAGE_VOLUME,
	// GET_VOLUME_STATS, EXPAND_VOLUME, SINGLE_NODE_MULTI_WRITER.
	// STAGE_UNSTAGE_VOLUME is required: publish binds from the staging path.
	Capabilities []*csi.NodeServiceCapability
	// Attachers replaces the built-in set (BuiltinAttachers); for tests and for
	// front ends that serve a subset.
	Attachers []Attacher
	// CommandTimeout bounds each host command; 0 → DefaultCommandTimeout.
	CommandTimeout time.Duration
	Logger         *slog.Logger
}

// DefaultCapabilities are advertised when Options.Capabilities is nil.
func DefaultCapabilities() []*csi.NodeServiceCapability {
	return Capabilities(
		csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME,
		csi.NodeServiceCapability_RPC_GET_VOLUME_STATS,
		csi.NodeServiceCapability_RPC_EXPAND_VOLUME,
		csi.NodeServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER,
	)
}

// implemented are the capabilities the Service can honour.
var implemented = []csi.NodeServiceCapability_RPC_Type{
	csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME,
	csi.NodeServiceCapability_RPC_GET_VOLUME_STATS,
	csi.NodeServiceCapability_RPC_EXPAND_VOLUME,
	csi.NodeServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER,
	csi.NodeServiceCapability_RPC_GET_VOLUME_HEALTH,
}

// Capabilities builds node capabilities from RPC types.
func Capabilities(types ...csi.NodeServiceCapability_RPC_Type) []*csi.NodeServiceCapability {
	out := make([]*csi.NodeServiceCapability, 0, len(types))
	for _, t := range types {
		out = append(out, &csi.NodeServiceCapability{
			Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{Type: t}},
		})
	}
	return out
}

// BuiltinAttachers are the attachers this build has.
func BuiltinAttachers() []Attacher {
	return []Attacher{HostPath{}, NFS{}, SMB{}, Lustre{}, ISCSI{}, NVMeoF{}, ZFSLocal{}}
}

// Service is the CSI node service. It is safe for concurrent use on
// different volumes; calls on one volume must come one at a time, which
// csi.Server's per-volume lock (driver/csi/interceptors.go) guarantees.
type Service struct {
	csi.UnimplementedNodeServer

	host      *Host
	store     *store
	attachers map[string]Attacher
	names     []string // sorted attacher names, for error messages
	nodeInfo  func(context.Context) (*csi.NodeGetInfoResponse, error)
	caps      []*csi.NodeServiceCapability
	log       *slog.Logger
}

var _ csi.NodeServer = (*Service)(nil)

// NewService builds the node service from opts.
func NewService(opts Options) (*Service, error) {
	if opts.StateDir == "" {
		return nil, errors.New("node: Options.StateDir is required (where node records persist across restarts)")
	}
	if opts.NodeInfo == nil {
		return nil, errors.New("node: Options.NodeInfo is required")
	}
	caps := opts.Capabilities
	if caps == nil {
		caps = DefaultCapabilities()
	}
	if !hasCap(caps, csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME) {
		return nil, errors.New("node: Capabilities must include STAGE_UNSTAGE_VOLUME: volumes are published from their staging path")
	}
	for _, c := range caps {
		// Advertising an RPC the service does not implement would send the
		// CO into UNIMPLEMENTED errors at run time.
		if t := c.GetRpc().GetType(); !slices.Contains(implemented, t) {
			return nil, fmt.Errorf("node: capability %s is not implemented by the node service", t)
		}
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	st, err := newStore(opts.StateDir)
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	mounter := opts.Mounter
	if mounter == nil {
		mounter = mount.New("")
	}
	ex := NewExec(opts.Exec, opts.CommandTimeout, log)
	s := &Service{
		host:      newHost(ex, mounter, log),
		store:     st,
		attachers: map[string]Attacher{},
		nodeInfo:  opts.NodeInfo,
		caps:      caps,
		log:       log,
	}
	s.host.Volumes = s.recordedVolumes
	atts := opts.Attachers
	if atts == nil {
		atts = BuiltinAttachers()
	}
	for _, a := range atts {
		if _, dup := s.attachers[a.Name()]; dup {
			return nil, fmt.Errorf("node: attacher %q given twice", a.Name())
		}
		s.attachers[a.Name()] = a
		s.names = append(s.names, a.Name())
	}
	slices.Sort(s.names)
	return s, nil
}

// NodeGetInfo implements csi.NodeServer by asking the front end.
func (s *Service) NodeGetInfo(ctx context.Context, _ *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	resp, err := s.nodeInfo(ctx)
	if err != nil {
		if _, ok := status.FromError(err); ok {
			return nil, err
		}
		return nil, status.Errorf(codes.Internal, "node info: %v", err)
	}
	return resp, nil
}

// NodeGetCapabilities implements csi.NodeServer.
func (s *Service) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{Capabilities: s.caps}, nil
}

// attacherFor picks the attacher named by the attach keys (attachContext).
func (s *Service) attacherFor(id string, vc map[string]string) (Attacher, error) {
	name := volumecontext.AttachDriver(vc)
	if name == "" {
		return nil, status.Errorf(codes.InvalidArgument,
			"volume %s: volume_context key %q is missing, and publish_context has none either (supported: %s)",
			id, volumecontext.KeyAttachDriver, strings.Join(s.names, ", "))
	}
	a, ok := s.attachers[name]
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument,
			"volume %s: volume_context %s=%q is not supported by this node plugin (supported: %s)",
			id, volumecontext.KeyAttachDriver, name, strings.Join(s.names, ", "))
	}
	return a, nil
}

// recordedAttacher is the attacher that staged a recorded volume.
func (s *Service) recordedAttacher(rec *record) (Attacher, error) {
	a, ok := s.attachers[rec.Attacher]
	if !ok {
		return nil, status.Errorf(codes.FailedPrecondition,
			"volume %s was staged with %s=%q, which this node plugin does not have (supported: %s)",
			rec.VolumeID, volumecontext.KeyAttachDriver, rec.Attacher, strings.Join(s.names, ", "))
	}
	return a, nil
}

// loadRecord is store.load with the error as a gRPC status.
func (s *Service) loadRecord(id string) (*record, error) {
	rec, err := s.store.load(id)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "volume %s: %v", id, err)
	}
	return rec, nil
}

// recordedVolumes is Host.Volumes: every volume with a record, except
// those being released by NodeUnstageVolume.
func (s *Service) recordedVolumes() ([]*Volume, error) {
	recs, err := s.store.list()
	if err != nil {
		return nil, err
	}
	out := make([]*Volume, 0, len(recs))
	for _, r := range recs {
		if !r.Releasing {
			out = append(out, r.volume())
		}
	}
	return out, nil
}

func (s *Service) saveRecord(rec *record) error {
	if err := s.store.save(rec); err != nil {
		return status.Errorf(codes.Internal, "volume %s: %v", rec.VolumeID, err)
	}
	return nil
}

// requirePath rejects an empty or relative path argument.
func requirePath(id, field, p string) error {
	if p == "" {
		return status.Errorf(codes.InvalidArgument, "volume %s: %s is required", id, field)
	}
	if !filepath.IsAbs(p) {
		return status.Errorf(codes.InvalidArgument, "volume %s: %s must be an absolute path, got %q", id, field, p)
	}
	return nil
}

// idAndPath checks the volume id and one required absolute path of a
// request, and returns the path cleaned.
func idAndPath(id, field, p string) (string, error) {
	if err := requireID(id); err != nil {
		return "", err
	}
	if err := requirePath(id, field, p); err != nil {
		return "", err
	}
	return filepath.Clean(p), nil
}

func requireID(id string) error {
	if id == "" {
		return status.Error(codes.InvalidArgument, "volume_id is required")
	}
	return nil
}

// asStatus keeps a gRPC status from an attacher and turns anything else
// into INTERNAL with the volume and the step named.
func asStatus(err error, id, step string) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Errorf(codes.Internal, "volume %s: %s: %v", id, step, err)
}

func hasCap(caps []*csi.NodeServiceCapability, t csi.NodeServiceCapability_RPC_Type) bool {
	for _, c := range caps {
		if c.GetRpc().GetType() == t {
			return true
		}
	}
	return false
}
