package proxy

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/transfer"
)

// File copies between directory backends: local-hostpath and the share
// clients (nfs-client, smb-client, lustre-client). Each keeps its volumes
// as directories under a controllerBasePath the controller itself reaches:
// local-hostpath's controller runs on the node that holds the volumes, and
// a client driver's share is mounted into the controller (its backend
// refuses every call while it is not). So the proxy copies a volume's
// directory into a fresh volume of the other connection as a tar stream
// through driver/transfer, in any combination of these types. It relies on
// the democratic-csi layout they keep (<controllerBasePath>/v/<volume id>,
// s/<snapshot id>); no other file backend lets the controller reach its
// files.

// dirSections are the directory backends and their config sections.
var dirSections = map[string]string{
	"local-hostpath": "local-hostpath",
	"nfs-client":     "nfs",
	"smb-client":     "smb",
	"lustre-client":  "lustre",
}

// FormatFiles is the stream of a directory tree.
const FormatFiles = "files"

// dirBase is a directory backend connection's controllerBasePath.
func dirBase(l *Lease) (string, bool) {
	sec, ok := dirSections[l.Type.Name]
	if !ok || l.in == nil || l.in.cfg == nil {
		return "", false
	}
	base, _ := l.in.cfg.merged.String(sec + ".controllerBasePath")
	return filepath.Clean(base), base != ""
}

// dirSender sends a directory backend's volume or snapshot directory.
type dirSender struct {
	base string
	l    *Lease
}

func (dirSender) StreamFormat() string { return FormatFiles }

func (s dirSender) SendSource(ctx context.Context, src *csipb.VolumeContentSource, _ string) (transfer.Source, int64, func(), error) {
	kind, id, sub := "volume", src.GetVolume().GetVolumeId(), "v"
	if sn := src.GetSnapshot(); sn != nil {
		kind, id, sub = "snapshot", snapshotDir(sn.GetSnapshotId()), "s"
	}
	// The source's own backend first: a client driver whose share is not
	// mounted on the controller says so (FAILED_PRECONDITION naming the
	// share), where a look at the empty mount point would only say
	// "not found".
	if err := s.askSource(ctx, src); err != nil {
		return nil, 0, nil, err
	}
	if id == "" || strings.ContainsAny(id, "/\x00") || id == "." || id == ".." || strings.HasPrefix(id, ".") {
		return nil, 0, nil, status.Errorf(codes.NotFound, "source %s %q does not exist", kind, id)
	}
	dir := filepath.Join(s.base, sub, id)
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return nil, 0, nil, status.Errorf(codes.NotFound, "source %s %q does not exist (no directory %s)", kind, id, dir)
	}
	var size int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, ierr := d.Info(); ierr == nil {
				size += info.Size()
			}
		}
		return nil
	})
	return tarSource{dir: dir}, size, func() {}, nil
}

// askSource asks the source connection's backend whether the source is
// there; a backend that cannot tell (UNIMPLEMENTED) leaves it to the
// directory check.
func (s dirSender) askSource(ctx context.Context, src *csipb.VolumeContentSource) error {
	if s.l == nil {
		return nil
	}
	var err error
	if sn := src.GetSnapshot(); sn != nil {
		_, err = s.l.Driver.GetSnapshot(ctx, &csipb.GetSnapshotRequest{SnapshotId: sn.GetSnapshotId()})
	} else {
		_, err = s.l.Driver.ControllerGetVolume(ctx, &csipb.ControllerGetVolumeRequest{VolumeId: src.GetVolume().GetVolumeId()})
	}
	if status.Code(err) == codes.Unimplemented {
		return nil
	}
	return err
}

// snapshotDir is the directory under s/ a snapshot id names: switchyard's
// ids are the directory; democratic-csi's are the query string
// snapshot_driver=filecopy&snapshot_id=<dir>.
func snapshotDir(id string) string {
	if strings.Contains(id, "=") {
		if q, err := url.ParseQuery(id); err == nil && q.Get("snapshot_id") != "" {
			return q.Get("snapshot_id")
		}
	}
	return id
}

type tarSource struct{ dir string }

// Send writes the tree as tar: directories, regular files and symbolic
// links with their modes; anything else (devices, sockets) is skipped.
// The tree is read through an os.Root, so a link swapped in while it is
// read cannot lead outside the volume.
func (t tarSource) Send(ctx context.Context, w io.Writer, _ string) error {
	root, err := os.OpenRoot(t.dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tw := tar.NewWriter(w)
	err = fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if d.Type()&fs.ModeSymlink != 0 {
			if link, err = root.Readlink(rel); err != nil {
				return err
			}
		} else if !d.IsDir() && !d.Type().IsRegular() {
			return nil
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		hdr.Name = rel
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.Type().IsRegular() {
			f, err := root.Open(rel)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// dirReceiver makes a fresh volume with the connection's own
// CreateVolume and unpacks the stream into its directory.
type dirReceiver struct {
	base string
	l    *Lease
}

func (dirReceiver) StreamFormat() string { return FormatFiles }

func (r dirReceiver) ReceiveVolume(ctx context.Context, req *csipb.CreateVolumeRequest) (transfer.Sink, func(context.Context) (*csipb.CreateVolumeResponse, error), error) {
	sink := &untarSink{r: r, req: req}
	finish := func(ctx context.Context) (*csipb.CreateVolumeResponse, error) {
		if sink.resp == nil {
			return r.l.Driver.CreateVolume(ctx, req)
		}
		return sink.resp, nil
	}
	return sink, finish, nil
}

type untarSink struct {
	r    dirReceiver
	req  *csipb.CreateVolumeRequest
	resp *csipb.CreateVolumeResponse
}

func (k *untarSink) Receive(ctx context.Context, rd io.Reader) error {
	resp, err := k.r.l.Driver.CreateVolume(ctx, k.req) // the fresh, empty volume (or the one an earlier call made)
	if err != nil {
		return err
	}
	k.resp = resp
	root, err := os.OpenRoot(filepath.Join(k.r.base, "v", resp.GetVolume().GetVolumeId()))
	if err != nil {
		return err
	}
	defer root.Close()
	tr := tar.NewReader(rd)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := unpackOne(root, hdr, tr); err != nil {
			return err
		}
	}
}

// unpackOne writes one entry into root. The os.Root refuses any name or
// link that would lead outside the volume (an entry under a symbolic link
// to /etc, say).
func unpackOne(root *os.Root, hdr *tar.Header, r io.Reader) error {
	name := hdr.Name
	mode := fs.FileMode(hdr.Mode).Perm()
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := root.MkdirAll(name, mode|0o700); err != nil {
			return err
		}
		return root.Chmod(name, mode)
	case tar.TypeSymlink:
		_ = root.Remove(name)
		return root.Symlink(hdr.Linkname, name)
	case tar.TypeReg:
		f, err := root.OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		return root.Chmod(name, mode)
	}
	return nil
}

func (k *untarSink) ResumeToken(context.Context) (string, error) { return "", nil }

// Abort deletes the volume the receive made.
func (k *untarSink) Abort(ctx context.Context) error {
	if k.resp == nil {
		return nil
	}
	if _, err := k.r.l.Driver.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: k.resp.GetVolume().GetVolumeId()}); err != nil {
		return fmt.Errorf("deleting the partial copy %s: %w", k.resp.GetVolume().GetVolumeId(), err)
	}
	k.resp = nil
	return nil
}
