package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// KubeBinaries are the programs lab/cluster/kubebuild builds.
var KubeBinaries = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kubectl"}

// FindRepo finds the switchyard checkout: dir if given, else the working
// directory or one of its parents with scripts/ensure-kube.sh (tests run in
// their package's directory).
func FindRepo(dir string) (string, error) {
	if dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "scripts", "ensure-kube.sh")); err != nil {
			return "", fmt.Errorf("%s is not a switchyard checkout: %w", dir, err)
		}
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "scripts", "ensure-kube.sh")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no switchyard checkout (scripts/ensure-kube.sh) in %s or its parents", wd)
		}
	}
}

// errNotBuilt is ensure-kube.sh --print-dir's exit status 3.
var errNotBuilt = errors.New("not built yet")

// ensureScript runs scripts/ensure-kube.sh with args and returns the
// directory it prints.
func ensureScript(ctx context.Context, repo string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "scripts", "ensure-kube.sh"), args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	dir := strings.TrimSpace(out.String())
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		return dir, errNotBuilt
	}
	if err != nil {
		return "", fmt.Errorf("scripts/ensure-kube.sh %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return dir, nil
}

// KubeBinDir is where the Kubernetes binaries of this checkout are (or
// will be) cached, and whether they are built.
func KubeBinDir(ctx context.Context, repoDir string) (dir string, built bool, err error) {
	repo, err := FindRepo(repoDir)
	if err != nil {
		return "", false, err
	}
	dir, err = ensureScript(ctx, repo, "--print-dir")
	if errors.Is(err, errNotBuilt) {
		return dir, false, nil
	}
	return dir, err == nil, err
}

// SidecarsDir is where the kubernetes-csi sidecars (bin/) and the snapshot
// CRDs (crd/) of this checkout are cached, and whether they are built.
func SidecarsDir(ctx context.Context, repoDir string) (dir string, built bool, err error) {
	repo, err := FindRepo(repoDir)
	if err != nil {
		return "", false, err
	}
	dir, err = ensureScript(ctx, repo, "--sidecars-dir")
	if errors.Is(err, errNotBuilt) {
		return dir, false, nil
	}
	return dir, err == nil, err
}

// EnsureBinaries builds the Kubernetes binaries unless cached (a cold
// build takes tens of minutes) and returns their directory.
func EnsureBinaries(ctx context.Context, repoDir string) (string, error) {
	repo, err := FindRepo(repoDir)
	if err != nil {
		return "", err
	}
	dir, err := ensureScript(ctx, repo, "--kube-only")
	if err != nil {
		return "", err
	}
	for _, b := range KubeBinaries {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("scripts/ensure-kube.sh built %s without %s", dir, b)
		}
	}
	return dir, nil
}
