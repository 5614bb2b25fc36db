package truenas

import (
	"context"

	"github.com/switchyard-csi/switchyard/driver/zfs"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// apiPlatform is the engine's platform of the freenas-api-* drivers:
// datasets, snapshots, permissions and shares all go through the API.
type apiPlatform struct {
	*truenas
	sharer   engine.Sharer
	closeAPI func() error
	pushVia  string // replication.sshCredentials (replication_push.go)
}

var _ engine.Platform = (*apiPlatform)(nil)

func (p *apiPlatform) Datasets() zfs.Datasets { return &datasets{t: p.truenas} }

func (p *apiPlatform) Sharer() engine.Sharer { return p.sharer }

func (p *apiPlatform) MaxZvolName(ctx context.Context) (int, string, error) {
	return p.maxZvolName(ctx)
}

// MinQuota: the API refuses refquota below 1 GiB (or 0).
func (*apiPlatform) MinQuota() int64 { return 1 << 30 }

func (p *apiPlatform) SetPermissions(ctx context.Context, mountpoint string, perm engine.Permissions) error {
	return p.setPermissions(ctx, mountpoint, perm)
}

func (p *apiPlatform) Close() error { return p.closeAPI() }

// sshPlatform is the engine's platform of the freenas-* SSH drivers: the
// zfs command line over SSH for datasets (and permissions), the API for
// shares.
type sshPlatform struct {
	*engine.CLIHost
	sharer   engine.Sharer
	closeAPI func() error
}

var _ engine.Platform = (*sshPlatform)(nil)

func (p *sshPlatform) Sharer() engine.Sharer { return p.sharer }

// MinQuota: zfs itself takes any refquota.
func (*sshPlatform) MinQuota() int64 { return 0 }

// Close closes the SSH connection, then the API client's.
func (p *sshPlatform) Close() error {
	err := p.CLIHost.Close()
	if cerr := p.closeAPI(); err == nil {
		err = cerr
	}
	return err
}
