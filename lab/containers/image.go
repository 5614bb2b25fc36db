package containers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ImageRepo is the repository of the simulators' image; the tag is a hash
// of its content.
const ImageRepo = "switchyard-lab/simulators"

// BuildImage builds the simulators' image from the repository at root and
// returns its reference. It needs Go and a Docker engine that answers
// (scripts/ensure-docker.sh starts one).
func BuildImage(ctx context.Context, root string) (string, error) {
	work, err := os.MkdirTemp("", "switchyard-simimage-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(work) }()
	rootfs := filepath.Join(work, "rootfs")
	if err := os.MkdirAll(filepath.Join(rootfs, "tmp"), 0o755); err != nil {
		return "", err
	}
	// MkdirAll's mode is masked by the umask; /tmp must be sticky and
	// world-writable as on any system.
	if err := os.Chmod(filepath.Join(rootfs, "tmp"), 0o1777|os.ModeSticky); err != nil {
		return "", err
	}
	bin := filepath.Join(rootfs, "switchyard-lab")
	if err := BuildBinary(ctx, root, bin); err != nil {
		return "", err
	}
	dockerfile := filepath.Join(root, "lab", "containers", "image", "Dockerfile")
	tag, err := contentTag(dockerfile, bin)
	if err != nil {
		return "", err
	}
	ref := ImageRepo + ":" + tag
	if exec.CommandContext(ctx, "docker", "image", "inspect", ref).Run() == nil {
		return ref, nil
	}
	cmd := exec.CommandContext(ctx, "docker", "build", "--network", "host", "-q", "-f", dockerfile, "-t", ref, work)
	// Debian's docker.io has no buildx; the legacy builder is what
	// scripts/images.sh uses too.
	cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("docker build of %s: %w\n%s", ref, err, strings.TrimSpace(string(out)))
	}
	removeOlder(ctx, ref)
	return ref, nil
}

// removeOlder removes the other tags of ImageRepo: each change of the
// binary makes a new one, and only the newest is used.
func removeOlder(ctx context.Context, keep string) {
	out, err := exec.CommandContext(ctx, "docker", "images", ImageRepo, "--format", "{{.Repository}}:{{.Tag}}").Output()
	if err != nil {
		return
	}
	for _, ref := range strings.Fields(string(out)) {
		if ref != keep {
			_ = exec.CommandContext(ctx, "docker", "rmi", ref).Run() // in use by a running test: kept, removed next time
		}
	}
}

// BuildBinary builds a static switchyard-lab from the repository at root
// into bin (a FROM-scratch image has no dynamic loader).
func BuildBinary(ctx context.Context, root, bin string) error {
	build := exec.CommandContext(ctx, goCommand(), "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/switchyard-lab")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/switchyard-lab (static) in %s: %w\n%s", root, err, out)
	}
	return nil
}

// contentTag is the first 20 hex digits of the SHA-256 of the files.
func contentTag(files ...string) (string, error) {
	h := sha256.New()
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, fh)
		_ = fh.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:20], nil
}

// goCommand is $GO, else go from PATH, else the toolchain running the test.
func goCommand() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtimeGOROOT(), "bin", "go")
}
