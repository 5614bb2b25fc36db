package truenas

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/truenas/api"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// Copies between two TrueNAS systems: the source system pushes with its
// own replication (replication.run_onetime, transport SSH) through an SSH
// connection of its keychain (Credentials > Backup Credentials > SSH
// Connections, a keychain credential of type SSH_CREDENTIALS) that
// reaches the target system. The connection file of the SOURCE names it:
//
//	replication:
//	  sshCredentials: nas-b   # the credential's name, or its id
//
// The target connection makes its parent dataset, the source system
// receives the snapshot into the target's dataset over SSH, and the target
// connection finishes the volume as any fresh one (labels, share).

// PushCredentialKey is the connection-file key naming the credential.
const PushCredentialKey = "replication.sshCredentials" //nolint:gosec // a config key name, not a credential

var _ engine.ReplicaPusherPlatform = (*apiPlatform)(nil)

// pushCredential reads PushCredentialKey (a string, or a number: an id).
func pushCredential(cfg config.Tree) string {
	return strings.TrimSpace(config.NewReader(cfg).Str(PushCredentialKey))
}

// checkPushCredential is config check's view of PushCredentialKey: one
// value, and only where the middleware replicates (the SSH drivers copy
// with zfs send/receive through the controller and never read it).
func checkPushCredential(r *config.Reader, k kind) {
	if v := r.Str(PushCredentialKey); v != "" && k.ssh {
		r.Add(PushCredentialKey, "only the freenas-api-* drivers copy through the TrueNAS replication; %s copies across connections with zfs send/receive over sshConnection, so remove it", k.name)
	}
}

// ReplicaPushVia is the credential the connection file names.
func (p *apiPlatform) ReplicaPushVia() string { return p.pushVia }

// CheckReplicaPush resolves the credential before anything is copied.
func (p *apiPlatform) CheckReplicaPush(ctx context.Context) error {
	_, err := p.pushCredentialID(ctx)
	return err
}

type keychainEntry struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// pushCredentialID finds the SSH_CREDENTIALS entry named by id or name.
func (p *apiPlatform) pushCredentialID(ctx context.Context) (int64, error) {
	if p.pushVia == "" {
		return 0, status.Errorf(codes.FailedPrecondition, "this connection does not set %s: copies to another TrueNAS system need the id or name of an SSH connection on this system that reaches the other", PushCredentialKey)
	}
	var rows []keychainEntry
	err := p.call(ctx, &rows, "keychaincredential.query", []any{[]any{"type", "=", "SSH_CREDENTIALS"}})
	if err != nil {
		return 0, p.statusErr(err, "reading the SSH connections (keychaincredential.query) for "+PushCredentialKey)
	}
	names := make([]string, 0, len(rows))
	for _, r := range rows {
		if r.Name == p.pushVia || strconv.FormatInt(r.ID, 10) == p.pushVia {
			return r.ID, nil
		}
		names = append(names, fmt.Sprintf("%d %q", r.ID, r.Name))
	}
	have := "it has none"
	if len(names) > 0 {
		have = "it has " + strings.Join(names, ", ")
	}
	return 0, status.Errorf(codes.FailedPrecondition, "%s is %q, but the TrueNAS at %s has no SSH connection (keychain credential of type SSH_CREDENTIALS) with that id or name (%s): create one under Credentials > Backup Credentials > SSH Connections reaching the target system, or correct %s", PushCredentialKey, p.pushVia, p.api.Endpoint(), have, PushCredentialKey)
}

// PushReplica copies snap into dataset on the system the credential
// reaches: the same one-time replication as a local copy, over SSH.
func (p *apiPlatform) PushReplica(ctx context.Context, snap, dataset string) error {
	id, err := p.pushCredentialID(ctx)
	if err != nil {
		return err
	}
	ds, short, _ := strings.Cut(snap, "@")
	req := map[string]any{
		"direction":        "PUSH",
		"transport":        "SSH",
		"ssh_credentials":  id,
		"source_datasets":  []string{ds},
		"target_dataset":   dataset,
		"recursive":        false,
		"name_regex":       "^" + regexpQuote(short) + "$",
		"retention_policy": "NONE",
		"readonly":         "IGNORE",
		"properties":       true,
	}
	_, err = p.api.CallJob(ctx, "replication.run_onetime", req)
	if err == nil {
		return nil
	}
	var ae *api.Error
	if api.IsValidation(err) || (errors.As(err, &ae) && strings.Contains(strings.ToLower(ae.Error()), "connect")) {
		return status.Errorf(codes.FailedPrecondition, "replication over SSH with credential %q (%s, id %d) from the TrueNAS at %s failed: %v; check that SSH connection", p.pushVia, PushCredentialKey, id, p.api.Endpoint(), err)
	}
	return p.datasetErr(err, "replication.run_onetime (SSH)")
}
