package truenas

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/truenas/api"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// kind is what a driver shares.
type kind struct {
	name     string // freenas-api-nfs, freenas-iscsi, ...
	alias    string // truenas-api-nfs, ...
	protocol string // nfs, smb, iscsi, nvmeof
	ssh      bool   // datasets through zfs over SSH, shares through the API
}

var kinds = []kind{
	{"freenas-api-nfs", "truenas-api-nfs", "nfs", false},
	{"freenas-api-smb", "truenas-api-smb", "smb", false},
	{"freenas-api-iscsi", "truenas-api-iscsi", "iscsi", false},
	{"freenas-api-nvmeof", "truenas-api-nvmeof", "nvmeof", false},
	{"freenas-nfs", "truenas-nfs", "nfs", true},
	{"freenas-smb", "truenas-smb", "smb", true},
	{"freenas-iscsi", "truenas-iscsi", "iscsi", true},
}

func (k kind) block() bool { return k.protocol == "iscsi" || k.protocol == "nvmeof" }

// fsTypes are the mount fs_types nodes may be asked for: a share mounts as
// its protocol's file system, a block volume as any the node formats.
func (k kind) fsTypes() []string {
	switch k.protocol {
	case "nfs":
		return engine.NFSFSTypes
	case "smb":
		return engine.SMBFSTypes
	}
	return engine.BlockFSTypes
}

func init() {
	for _, k := range kinds {
		var warnings func(config.Tree) []config.Problem
		if k.ssh {
			warnings = engine.SSHWarnings
		}
		backend.Register(backend.Type{
			Name:             k.name,
			Aliases:          []string{k.alias},
			ConfigKey:        "httpConnection",
			MaxVolumeIDLen:   engine.MaxVolumeIDLen,
			MaxSnapshotIDLen: engine.MaxSnapshotIDLen,
			Validate:         func(cfg config.Tree) []config.Problem { _, _, _, ps := parse(k, cfg); return ps },
			Warnings:         warnings,
			New: func(opts backend.Options) (backend.Driver, error) {
				return New(k, opts)
			},
		})
	}
}

// parse reads and checks every key the driver uses: httpConnection, the
// protocol section, the keys every ZFS backend shares and, for the SSH
// drivers, sshConnection and zfs.cli.
func parse(k kind, cfg config.Tree) (api.Config, shareSettings, engine.CLIConfig, []config.Problem) {
	r := config.NewReader(cfg)
	hc := parseHTTP(r)
	var s shareSettings
	switch k.protocol {
	case "nfs":
		s = parseNFS(r)
	case "smb":
		s = parseSMB(r)
	case "iscsi":
		s = parseISCSI(r)
	case "nvmeof":
		s = parseNVMeoF(r)
	}
	engine.Validate(r)
	checkPushCredential(r, k)
	var cli engine.CLIConfig
	if k.ssh {
		cli = engine.ReadCLI(r, true)
	}
	return hc, s, cli, r.Problems()
}

// New builds a TrueNAS driver. Nothing is contacted until the first call.
func New(k kind, opts backend.Options) (backend.Driver, error) {
	hc, s, cli, ps := parse(k, opts.Config)
	if len(ps) > 0 {
		return nil, config.Problems(ps).InFile(opts.File)
	}
	// The driver reports itself as configured (truenas-* or freenas-*):
	// volume_context's provisioner_driver is compared with it.
	if name, _ := opts.Config["driver"].(string); name != "" {
		k.name = name
	}
	log := engine.Logger(opts, k.name)
	client, err := api.New(hc, log)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.File, err)
	}
	t := &truenas{kind: k, api: client, log: log, csiName: opts.CSIName}
	sharer := t.sharer(s)
	var p engine.Platform = &apiPlatform{truenas: t, sharer: sharer, closeAPI: client.Close, pushVia: pushCredential(opts.Config)}
	if k.ssh {
		host, err := engine.NewCLIHost(opts, k.name, cli)
		if err != nil {
			return nil, err
		}
		p = &sshPlatform{CLIHost: host, sharer: sharer, closeAPI: client.Close}
	}
	return engine.New(engine.Options{Options: opts, Driver: k.name, Block: k.block(), FSTypes: k.fsTypes(), Platform: p})
}

// caller is what the backend needs of the API client (*api.Client).
type caller interface {
	Call(ctx context.Context, method string, params ...any) (json.RawMessage, error)
	CallJob(ctx context.Context, method string, params ...any) (json.RawMessage, error)
	Version(ctx context.Context) (api.Version, error)
	Endpoint() string
}

// truenas holds what the datasets and sharers of one driver share.
type truenas struct {
	kind    kind
	api     caller
	log     *slog.Logger
	csiName string
}

// call runs a method and decodes its result into out (when not nil).
func (t *truenas) call(ctx context.Context, out any, method string, params ...any) error {
	raw, err := t.api.Call(ctx, method, params...)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return t.unexpected(method, err)
	}
	return nil
}

// unexpected is an answer that does not decode into what method returns.
func (t *truenas) unexpected(method string, err error) error {
	return fmt.Errorf("%s: unexpected answer from %s: %v", method, t.api.Endpoint(), err)
}

// version is the server's release.
func (t *truenas) version(ctx context.Context) (api.Version, error) {
	v, err := t.api.Version(ctx)
	if err != nil {
		return api.Version{}, t.statusErr(err, "reading the TrueNAS version")
	}
	return v, nil
}

// snapshotNS is where snapshots live: zfs.snapshot up to 25.04,
// pool.snapshot from 25.10 (zfs.snapshot became private).
func (t *truenas) snapshotNS(ctx context.Context) (string, error) {
	v, err := t.version(ctx)
	if err != nil {
		return "", err
	}
	if v.AtLeast(25, 10, 0) {
		return "pool.snapshot", nil
	}
	return "zfs.snapshot", nil
}

// maxZvolName: every supported TrueNAS release runs Linux, whose zvol
// device names may be 255 characters long.
func (t *truenas) maxZvolName(ctx context.Context) (int, string, error) {
	v, err := t.version(ctx)
	if err != nil {
		return 0, "", err
	}
	return 255, "TrueNAS " + strings.TrimPrefix(v.String(), "TrueNAS-"), nil
}
