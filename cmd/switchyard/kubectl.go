package main

// The handles Kubernetes knows, read from the cluster with the user's own
// kubectl (--kubeconfig, --context). The driver's module has no Kubernetes
// client library (DESIGN.md: Kubernetes libraries live in e2e's own
// module; the driver talks CSI and to storage), and kubectl already
// handles every kind of kubeconfig credential (certificates, tokens, exec
// plugins, OIDC). It runs without a shell: argv only.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"unicode/utf8"
)

// kubeCluster is where and how kubectl reaches the cluster.
type kubeCluster struct {
	kubectl    string // the program: "kubectl", or a path (--kubectl)
	kubeconfig string // --kubeconfig
	context    string // --context, "" for the kubeconfig's current context
}

// kubeHandles are the handles of one CSI driver's objects in the cluster.
type kubeHandles struct {
	known   map[string]bool
	volumes []string // the PersistentVolumes' volume handles
	// pending are VolumeSnapshotContents of the driver with no snapshot
	// handle yet: a snapshot being cut, whose backend object would look
	// orphaned.
	pending []string
	// noSnapshotAPI: the cluster has no VolumeSnapshotContent type (the
	// snapshot CRDs are not installed), so it has no snapshots.
	noSnapshotAPI bool
}

// handles reads the PersistentVolumes' volume handles and the
// VolumeSnapshotContents' snapshot handles of driver.
func (k kubeCluster) handles(ctx context.Context, driver string) (kubeHandles, error) {
	h := kubeHandles{known: map[string]bool{}}
	pvs, err := k.get(ctx, "persistentvolumes")
	if err != nil {
		return h, err
	}
	var pvList struct {
		Items []struct {
			Spec struct {
				CSI *struct {
					Driver       string `json:"driver"`
					VolumeHandle string `json:"volumeHandle"`
				} `json:"csi"`
			} `json:"spec"`
		} `json:"items"`
	}
	if err := json.Unmarshal(pvs, &pvList); err != nil {
		return h, fmt.Errorf("kubectl get persistentvolumes -o json printed something that is not a list: %v", err)
	}
	for _, pv := range pvList.Items {
		if c := pv.Spec.CSI; c != nil && c.Driver == driver && c.VolumeHandle != "" {
			h.known[c.VolumeHandle] = true
			h.volumes = append(h.volumes, c.VolumeHandle)
		}
	}
	vscs, err := k.get(ctx, "volumesnapshotcontents.snapshot.storage.k8s.io")
	if errors.Is(err, errNoResourceType) {
		h.noSnapshotAPI = true
		return h, nil
	}
	if err != nil {
		return h, err
	}
	var vscList struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				Driver string `json:"driver"`
				Source struct {
					SnapshotHandle string `json:"snapshotHandle"`
				} `json:"source"`
			} `json:"spec"`
			Status *struct {
				SnapshotHandle string `json:"snapshotHandle"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(vscs, &vscList); err != nil {
		return h, fmt.Errorf("kubectl get volumesnapshotcontents -o json printed something that is not a list: %v", err)
	}
	for _, c := range vscList.Items {
		if c.Spec.Driver != driver {
			continue
		}
		// A dynamically made content has its handle in status once the
		// snapshot is cut; a pre-provisioned one names it in its source.
		handle := c.Spec.Source.SnapshotHandle
		if c.Status != nil && c.Status.SnapshotHandle != "" {
			handle = c.Status.SnapshotHandle
		}
		if handle == "" {
			h.pending = append(h.pending, c.Metadata.Name)
			continue
		}
		h.known[handle] = true
	}
	sort.Strings(h.pending)
	return h, nil
}

// errNoResourceType is kubectl's "the server doesn't have a resource type".
var errNoResourceType = errors.New("the cluster has no such resource type")

// get runs `kubectl --kubeconfig F [--context C] get <resource> -o json`.
func (k kubeCluster) get(ctx context.Context, resource string) ([]byte, error) {
	prog, err := exec.LookPath(k.kubectl)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig reads the cluster with kubectl, and %q was not found (%v): install kubectl, name it with --kubectl, or give the handles with --handles", k.kubectl, err)
	}
	args := []string{"--kubeconfig", k.kubeconfig}
	if k.context != "" {
		args = append(args, "--context", k.context)
	}
	args = append(args, "get", resource, "-o", "json")
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if strings.Contains(msg, "doesn't have a resource type") {
			return nil, fmt.Errorf("%w: %s", errNoResourceType, bounded(msg))
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("%s %s failed (%v): %s", k.kubectl, strings.Join(args, " "), err, bounded(msg))
	}
	return out.Bytes(), nil
}

// kubectlOutputMax bounds what an error repeats of kubectl's stderr.
const kubectlOutputMax = 2048

func bounded(s string) string {
	if len(s) <= kubectlOutputMax {
		return s
	}
	cut := kubectlOutputMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "... (truncated)"
}

// doubts are the reasons, from the cluster's answer, why the report r may
// list objects Kubernetes does use; --delete refuses to act on it then.
func (h kubeHandles) doubts(r orphanReport, driver string) []string {
	var out []string
	if len(h.pending) > 0 {
		out = append(out, fmt.Sprintf("VolumeSnapshotContent %s of %s has no snapshot handle yet (a snapshot being cut, whose backend snapshot would look orphaned): run again once it is ready",
			strings.Join(h.pending, ", "), driver))
	}
	if len(h.known) == 0 && len(r.Volumes) > 0 {
		out = append(out, fmt.Sprintf("the cluster has no PersistentVolume or VolumeSnapshotContent of driver %s, yet the backends hold %d of its volumes: is --csi-name the CSIDriver's name, and --kubeconfig/--context the cluster that uses these backends?",
			driver, len(r.Volumes)))
	}
	if h.noSnapshotAPI && len(r.Snapshots) > 0 {
		out = append(out, fmt.Sprintf("the cluster has no VolumeSnapshotContent type (the snapshot CRDs are not installed), yet the backends hold %d snapshots of this driver: is --kubeconfig/--context the cluster that made them?",
			len(r.Snapshots)))
	}
	return out
}
