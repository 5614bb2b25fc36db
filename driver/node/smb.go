package node

import (
	"context"
	"fmt"
	"os"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// SMB is the "smb" attacher: volume_context server and share are mounted
// as //server/share with mount -t cifs. Credentials come from the secrets
// "username", "password" and "domain" and reach mount.cifs through a
// private credentials file, never the command line; without a username
// (there or in the mount flags) the mount is "guest", so mount.cifs never
// waits for a password on stdin.
type SMB struct{}

// SMB secret keys.
const (
	SecretUsername = "username"
	SecretPassword = "password"
	SecretDomain   = "domain"
)

var smbShare = share{
	name:    "smb",
	fsTypes: []string{"cifs", "smb3"},
	source:  func(server, share string) string { return "//" + server + "/" + strings.TrimLeft(share, "/") },
	decode: func(vc map[string]string) (string, string, error) {
		var c volumecontext.SMB
		err := c.Decode(vc)
		return c.Server, c.Share, err
	},
}

// Name implements Attacher.
func (SMB) Name() string { return "smb" }

// Validate implements Attacher.
func (SMB) Validate(v *Volume) error {
	if err := smbShare.validate(v); err != nil {
		return err
	}
	sec := normalizedSecrets(v)
	for _, k := range []string{SecretUsername, SecretPassword, SecretDomain} {
		// A line break would let a value add lines to the credentials file.
		if strings.ContainsAny(sec[k], "\r\n") {
			return status.Errorf(codes.InvalidArgument, "volume %s: secret %q must be one line", v.ID, k)
		}
	}
	return nil
}

// Stage implements Attacher.
func (SMB) Stage(ctx context.Context, h *Host, v *Volume) error {
	plain, sensitive := mountFlags(v)
	sec := normalizedSecrets(v)
	if user := sec[SecretUsername]; user != "" {
		file, err := writeCIFSCredentials(h.environ().tempDir, user, sec[SecretPassword], sec[SecretDomain])
		if err != nil {
			return status.Errorf(codes.Internal, "volume %s: SMB credentials file: %v", v.ID, err)
		}
		defer os.Remove(file)
		plain = append(plain, "credentials="+file)
	} else if !hasFlag("username", plain, sensitive) && !hasFlag("credentials", plain, sensitive) && !hasFlag("guest", plain, sensitive) {
		plain = append(plain, "guest")
	}
	if g := v.Capability.GetMount().GetVolumeMountGroup(); g != "" && !hasFlag("gid", plain, sensitive) {
		plain = append(plain, "gid="+g)
	}
	return smbShare.mount(ctx, h, v, smbShare.device(v), smbShare.fsType(v), plain, sensitive)
}

// Unstage implements Attacher: the mount was all.
func (SMB) Unstage(context.Context, *Host, *Volume) error { return nil }

// writeCIFSCredentials writes a mount.cifs credentials file readable only
// by this user (os.CreateTemp makes it 0600) and returns its path.
func writeCIFSCredentials(dir, user, password, domain string) (string, error) {
	f, err := os.CreateTemp(dir, ".smb-credentials-*")
	if err != nil {
		return "", err
	}
	content := fmt.Sprintf("username=%s\npassword=%s\n", user, password)
	if domain != "" {
		content += "domain=" + domain + "\n"
	}
	_, werr := f.WriteString(content)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(f.Name())
		return "", werr
	}
	return f.Name(), nil
}
