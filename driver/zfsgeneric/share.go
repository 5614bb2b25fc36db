package zfsgeneric

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
	"github.com/switchyard-csi/switchyard/driver/zfs"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

func newSharer(d *platform) engine.Sharer {
	switch d.cfg.driver {
	case DriverNFS:
		return propertyShare{d: d, attach: "nfs"}
	case DriverSMB:
		return propertyShare{d: d, attach: "smb"}
	case DriverISCSI:
		return iscsiShare{d: d, listing: newListingCache()}
	case DriverNVMeoF:
		return nvmeofShare{d: d, listing: newListingCache()}
	}
	panic("zfsgeneric: no sharer for " + d.cfg.driver) // parseSettings refuses other drivers
}

// propertyShare shares a filesystem with sharenfs/sharesmb (and share):
// the host's own zfs share integration serves it. The share goes away with
// the dataset, so remove has nothing to do.
type propertyShare struct {
	d      *platform
	attach string
}

func (s propertyShare) Create(_ context.Context, r engine.ShareRequest) (map[string]string, []zfs.Prop, error) {
	var props []zfs.Prop
	for _, p := range s.d.cfg.share.props {
		props = append(props, zfs.Prop{Name: p.Key, Value: p.Value})
	}
	vc := volumecontext.NFS{Server: s.d.cfg.share.host, Share: r.Mountpoint}.Encode()
	if s.attach != "nfs" {
		vc = volumecontext.SMB{Server: s.d.cfg.share.host, Share: smbShareName(r.Dataset)}.Encode()
	}
	return vc, props, nil
}

func (propertyShare) Remove(context.Context, string, zfs.Properties) error { return nil }

func (propertyShare) AssetProps() []string { return nil }

// PropertiesOnly: the share is set with the dataset's own properties, so
// a new volume is made, shared and marked provisioned by one exec.
func (propertyShare) PropertiesOnly() {}

var _ engine.PropertySharer = propertyShare{}

// smbShareName is the share name zfs's sharesmb gives a dataset (and
// democratic-csi assumes): the name with "/" and "-" replaced by "_".
func smbShareName(dataset string) string {
	return strings.NewReplacer("/", "_", "-", "_").Replace(dataset)
}

// assetName is the target/subsystem name of a volume: nameTemplate (or the
// volume id), with namePrefix and nameSuffix, lowercased, as democratic-csi.
func (d *platform) assetName(section string, r engine.ShareRequest) (string, error) {
	sh := d.cfg.share
	name := r.ID
	if sh.nameTemplate != nil {
		name = sh.nameTemplate.Render(r.Name, r.Params)
	}
	name = strings.ToLower(sh.namePrefix + name + sh.nameSuffix)
	if name == "" {
		return "", status.Errorf(codes.InvalidArgument, "%s.nameTemplate rendered an empty name for volume %q", section, r.Name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("-_.:", c) >= 0) {
			return "", status.Errorf(codes.InvalidArgument, "%s asset name %q for volume %q contains %q: names may hold a-z, 0-9, '-', '_', '.' and ':' (check %s.nameTemplate, namePrefix and nameSuffix)", section, name, r.Name, c, section)
		}
	}
	return name, nil
}

// qualifiedNameMax is the longest IQN or NQN (RFC 3720, NVMe base spec).
const qualifiedNameMax = 223

func checkQualifiedName(kind, name, section string) error {
	if len(name) > qualifiedNameMax {
		return status.Errorf(codes.FailedPrecondition, "%s %s is %d bytes; the limit is %d: shorten %s's basename, nameTemplate, namePrefix or nameSuffix", kind, name, len(name), qualifiedNameMax, section)
	}
	return nil
}

// storedAsset is the asset name recorded on the dataset, or the default
// derived from the dataset name (volumes democratic-csi made before it
// recorded names).
func (d *platform) storedAsset(dataset string, props zfs.Properties, prop string) string {
	if p := props[prop]; p.IsSet() {
		return strings.ToLower(p.Value)
	}
	leaf := dataset[strings.LastIndexByte(dataset, '/')+1:]
	return strings.ToLower(d.cfg.share.namePrefix + leaf + d.cfg.share.nameSuffix)
}

// runCLI feeds a script to targetcli or nvmetcli on the host: `sh -c
// 'echo <script> | [sudo] <cli>'` with a pty, as democratic-csi does, but
// with the script single-quoted so the shell expands nothing in it. Calls
// are serialised per host; "Ran out of input" (targetcli reading a
// truncated script) is retried.
func (d *platform) runCLI(ctx context.Context, cli []string, script string, sensitive []string) (zfs.Output, error) {
	return d.runCLIWhen(ctx, "", cli, script, sensitive)
}

// notReadyExit is the status of a runCLIWhen whose flag file is missing.
const notReadyExit = 97

// runCLIWhen is runCLI that first checks, in the same exec, that the file
// flag exists (test -f), and exits notReadyExit without running the CLI
// when it does not: one round trip instead of two. flag "" checks nothing.
func (d *platform) runCLIWhen(ctx context.Context, flag string, cli []string, script string, sensitive []string) (zfs.Output, error) {
	if d.cfg.share.cliSudo {
		cli = append([]string{d.SudoPath()}, cli...)
	}
	line := zfs.Line("sh", "-c", "echo "+zfs.Quote(script)+" | "+zfs.Line(cli...))
	if flag != "" {
		line = zfs.Line("test", "-f", flag) + " || exit " + strconv.Itoa(notReadyExit) + "; " + line
	}
	select {
	case d.cliLock <- struct{}{}:
	case <-ctx.Done():
		return zfs.Output{}, status.Errorf(codes.Aborted, "%s: another %s run on the storage host is still in progress (%v)", d.cfg.driver, cli[len(cli)-1], ctx.Err())
	}
	defer func() { <-d.cliLock }()
	var out zfs.Output
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		out, err = d.Run(ctx, line, zfs.RunOptions{PTY: true, Sensitive: sensitive})
		if err != nil {
			return out, err
		}
		if !strings.Contains(out.Stdout+out.Stderr, "Ran out of input") {
			break
		}
	}
	return out, nil
}

func cliFailed(d *platform, what string, out zfs.Output, sensitive []string) error {
	msg := strings.TrimSpace(out.Stdout + "\n" + out.Stderr)
	for _, s := range sensitive {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "<redacted>")
		}
	}
	for _, s := range sensitive {
		// A value that "<redacted>" itself spells survives the
		// replacement: then none of the output is shown.
		if s != "" && strings.Contains(msg, s) {
			msg = "(output withheld: it holds a sensitive value)"
		}
	}
	// The host's output is echoed input: bounded (DESIGN.md contract 6).
	if len(msg) > cliOutputMax {
		cut := cliOutputMax
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "... (truncated)"
	}
	return status.Error(codes.Internal, fmt.Sprintf("%s: %s failed (exit %d): %s", d.cfg.driver, what, out.Code, msg))
}

// cliOutputMax bounds the targetcli/nvmetcli output an error repeats.
const cliOutputMax = 2048

// notThere reports output that means "already gone" from a delete.
func notThere(out zfs.Output) bool {
	t := strings.ToLower(out.Stdout + out.Stderr)
	// "WWN not valid": targetcli refusing a name no target can have.
	for _, s := range []string{"no such", "does not exist", "not found", "no target", "no storage object", "wwn not valid"} {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// looksLikeError reports output in which a configshell tool (targetcli,
// nvmetcli) complained about a command.
func looksLikeError(out zfs.Output) bool {
	t := strings.ToLower(out.Stdout + out.Stderr)
	for _, s := range []string{"error", "no such", "exists", "invalid", "cannot", "could not", "not found", "unknown", "traceback"} {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}
