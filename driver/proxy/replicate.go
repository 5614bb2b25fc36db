package proxy

import (
	"context"
	"fmt"
	"io"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/transfer"
)

// Copies the storage system makes itself (backend.Replicator): two
// connections of one system. They run as any copy across connections (in
// the background, ABORTED to retries until done, metrics), but what passes
// through the controller is only the name of the source snapshot; the
// data moves inside the system.

// replicaPair is the pair when both connections reach one system, or
// when the source's system can push to the target's (replicate_push.go).
func replicaPair(src, dst *Lease) (backend.StreamSender, backend.StreamReceiver, bool) {
	rs, okS := src.Driver.(backend.Replicator)
	rd, okD := dst.Driver.(backend.Replicator)
	if !okS || !okD {
		return nil, nil, false
	}
	es, ed := rs.ReplicaEndpoint(), rd.ReplicaEndpoint()
	if es == "" || ed == "" {
		return nil, nil, false
	}
	if es == ed {
		return replicaSender{r: rs}, replicaReceiver{receive: rd.ReceiveReplica}, true
	}
	return pushPair(rs, rd, es, ed)
}

// replicaEndpoints says why two TrueNAS API connections cannot replicate
// here: they reach different systems, or volumes of different kinds.
func replicaEndpoints(src, dst *Lease) (string, string) {
	rs, okS := src.Driver.(backend.Replicator)
	rd, okD := dst.Driver.(backend.Replicator)
	if !okS || !okD {
		return "", ""
	}
	return rs.ReplicaEndpoint(), rd.ReplicaEndpoint()
}

// FormatReplica is the "stream" of a replica: the source snapshot's name.
const FormatReplica = "replica"

type replicaSender struct {
	r     backend.Replicator
	check func(context.Context) error // before anything is made; nil: none
}

func (replicaSender) StreamFormat() string { return FormatReplica }

func (s replicaSender) SendSource(ctx context.Context, src *csipb.VolumeContentSource, forName string) (transfer.Source, int64, func(), error) {
	if s.check != nil {
		if err := s.check(ctx); err != nil {
			return nil, 0, nil, err
		}
	}
	snap, done, err := s.r.ReplicaSource(ctx, src, forName)
	if err != nil {
		return nil, 0, nil, err
	}
	return snapName(snap), 0, done, nil
}

type snapName string

func (n snapName) Send(_ context.Context, w io.Writer, _ string) error {
	_, err := io.WriteString(w, string(n))
	return err
}

// replicaReceiver makes the volume from the source snapshot's name.
type replicaReceiver struct {
	receive func(ctx context.Context, req *csipb.CreateVolumeRequest, snap string) (*csipb.CreateVolumeResponse, error)
}

func (replicaReceiver) StreamFormat() string { return FormatReplica }

func (r replicaReceiver) ReceiveVolume(_ context.Context, req *csipb.CreateVolumeRequest) (transfer.Sink, func(context.Context) (*csipb.CreateVolumeResponse, error), error) {
	k := &replicaSink{receive: r.receive, req: req}
	finish := func(context.Context) (*csipb.CreateVolumeResponse, error) {
		if k.resp == nil {
			return nil, status.Error(codes.Internal, "the replication ended without a volume")
		}
		return k.resp, nil
	}
	return k, finish, nil
}

type replicaSink struct {
	receive func(ctx context.Context, req *csipb.CreateVolumeRequest, snap string) (*csipb.CreateVolumeResponse, error)
	req     *csipb.CreateVolumeRequest
	resp    *csipb.CreateVolumeResponse
}

// Receive reads the snapshot's name and lets the system copy it.
func (k *replicaSink) Receive(ctx context.Context, rd io.Reader) error {
	b, err := io.ReadAll(io.LimitReader(rd, 4096))
	if err != nil {
		return err
	}
	snap := strings.TrimSpace(string(b))
	if snap == "" {
		return status.Error(codes.Internal, "no source snapshot named")
	}
	k.resp, err = k.receive(ctx, k.req, snap)
	return err
}

// ResumeToken: the system's replication does not resume; a failed one
// removes what it made (ReceiveReplica), and the retry starts over.
func (*replicaSink) ResumeToken(context.Context) (string, error) { return "", nil }

func (*replicaSink) Abort(context.Context) error { return nil }

// trueNASMessage says what to configure when two TrueNAS API connections
// (or one and another backend) cannot copy.
func trueNASMessage(src, dst *Lease) string {
	es, ed := replicaEndpoints(src, dst)
	if es != "" && ed != "" {
		ss, _, _ := strings.Cut(es, "#")
		sd, _, _ := strings.Cut(ed, "#")
		if ss == sd {
			return fmt.Sprintf("both reach the TrueNAS at %s, but one serves filesystems and the other zvols: use a target of the source's kind", ss)
		}
		return fmt.Sprintf("they reach different TrueNAS systems (%s and %s). The middleware replicates between systems over SSH: create an SSH connection on the source system (Credentials > Backup Credentials > SSH Connections, a keychain credential of type SSH_CREDENTIALS) that reaches the target system, and name it (its name or id) in the source connection %s's file as %s (docs/migrating-between-connections.md). Or use SSH connections (freenas-nfs, freenas-iscsi, zfs-generic-*) for both ends, which copy with zfs send/receive through the controller", ss, sd, src.Name, truenasPushKey)
	}
	return "a TrueNAS API connection cannot stream a volume to another kind of backend through the controller. Either use SSH connections (freenas-nfs, freenas-iscsi, zfs-generic-*) for both ends, which copy with zfs send/receive, or copy with a TrueNAS replication task (Data Protection > Replication Tasks) and import the dataset on the target"
}
