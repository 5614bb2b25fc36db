package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Fake nodes stand in for nodes of zones the lab has no machine for: a
// Node with the zone labels and a Ready condition (so the scheduler binds
// pods there; they never run) and a CSINode with the driver's topology
// keys (what external-provisioner reads). kube-controller-manager's node
// lifecycle controller marks a node whose lease goes stale NotReady and
// taints it, so this process renews each fake node's lease until Stop or
// RemoveFakeNode: a fake node stays Ready while the process that added it
// runs.

const (
	leaseNamespace   = "kube-node-lease"
	leaseDuration    = 40 // seconds, as a kubelet's
	heartbeatEvery   = 10 * time.Second
	microTimeLayout  = "2006-01-02T15:04:05.000000Z07:00"
	fakeNodeReason   = "SwitchyardLabFakeNode"
	fakeNodeMessage  = "a node object of the lab: pods bound here never run"
	fakeNodeCapacity = "110"
)

// FakeNodeLabel marks the lab's fake nodes.
const FakeNodeLabel = "lab.switchyard.io/fake-node"

// nodeObject is the Node to create.
func nodeObject(name string, labels map[string]string) map[string]any {
	l := map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", FakeNodeLabel: "true"}
	for k, v := range labels {
		l[k] = v
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": name, "labels": l},
	}
}

// nodeStatusPatch makes the node Ready with room for pods.
func nodeStatusPatch(now time.Time) map[string]any {
	ts := now.UTC().Format(time.RFC3339)
	res := map[string]string{"cpu": "8", "memory": "16Gi", "pods": fakeNodeCapacity, "ephemeral-storage": "100Gi"}
	return map[string]any{"status": map[string]any{
		"capacity": res, "allocatable": res,
		"conditions": []map[string]string{{
			"type": "Ready", "status": "True", "reason": fakeNodeReason, "message": fakeNodeMessage,
			"lastHeartbeatTime": ts, "lastTransitionTime": ts,
		}},
	}}
}

// csiNodeObject is the CSINode of a node with one driver.
func csiNodeObject(name, driver string, topologyKeys []string) map[string]any {
	if topologyKeys == nil {
		topologyKeys = []string{}
	}
	return map[string]any{
		"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"drivers": []map[string]any{{
			"name": driver, "nodeID": name, "topologyKeys": topologyKeys,
		}}},
	}
}

// AddFakeNode creates (or updates) a Ready Node named name with labels and
// its CSINode listing driverName with topologyKeys, and keeps its lease
// fresh (see above). An empty driverName makes no CSINode.
func (c *Local) AddFakeNode(ctx context.Context, name string, labels map[string]string, driverName string, topologyKeys []string) error {
	if name == "" {
		return errors.New("fake node: empty name")
	}
	err := c.api(ctx, http.MethodPost, "/api/v1/nodes", "", nodeObject(name, labels), nil)
	if isConflict(err) {
		patch := map[string]any{"metadata": map[string]any{"labels": nodeObject(name, labels)["metadata"].(map[string]any)["labels"]}}
		err = c.api(ctx, http.MethodPatch, "/api/v1/nodes/"+name, "application/merge-patch+json", patch, nil)
	}
	if err != nil {
		return fmt.Errorf("fake node %s: %w", name, err)
	}
	if err := c.api(ctx, http.MethodPatch, "/api/v1/nodes/"+name+"/status", "application/merge-patch+json", nodeStatusPatch(time.Now()), nil); err != nil {
		return fmt.Errorf("fake node %s status: %w", name, err)
	}
	if driverName != "" {
		obj := csiNodeObject(name, driverName, topologyKeys)
		err := c.api(ctx, http.MethodPost, "/apis/storage.k8s.io/v1/csinodes", "", obj, nil)
		if isConflict(err) {
			// CSINode drivers are immutable once set: replace the object.
			if err = c.api(ctx, http.MethodDelete, "/apis/storage.k8s.io/v1/csinodes/"+name, "", nil, nil); err == nil || isNotFound(err) {
				err = c.api(ctx, http.MethodPost, "/apis/storage.k8s.io/v1/csinodes", "", obj, nil)
			}
		}
		if err != nil {
			return fmt.Errorf("fake node %s CSINode: %w", name, err)
		}
	}
	if err := c.renewLease(ctx, name); err != nil {
		return fmt.Errorf("fake node %s lease: %w", name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.heartbeat[name]; !ok {
		hctx, cancel := context.WithCancel(context.Background())
		c.heartbeat[name] = cancel
		go c.heartbeatLoop(hctx, name)
	}
	return nil
}

// RemoveFakeNode stops the node's heartbeat and deletes its Node, CSINode
// and lease.
func (c *Local) RemoveFakeNode(ctx context.Context, name string) error {
	c.mu.Lock()
	if cancel, ok := c.heartbeat[name]; ok {
		cancel()
		delete(c.heartbeat, name)
	}
	c.mu.Unlock()
	var errs []error
	for _, p := range []string{
		"/api/v1/nodes/" + name,
		"/apis/storage.k8s.io/v1/csinodes/" + name,
		"/apis/coordination.k8s.io/v1/namespaces/" + leaseNamespace + "/leases/" + name,
	} {
		if err := c.api(ctx, http.MethodDelete, p, "", nil, nil); err != nil && !isNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *Local) heartbeatLoop(ctx context.Context, name string) {
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			// A missed beat is retried at the next tick; the controller
			// tolerates several (node-monitor-grace-period, 50 s).
			_ = c.renewLease(ctx, name)
		}
	}
}

// renewLease creates or renews the node's lease in kube-node-lease.
func (c *Local) renewLease(ctx context.Context, name string) error {
	now := time.Now().UTC().Format(microTimeLayout)
	path := "/apis/coordination.k8s.io/v1/namespaces/" + leaseNamespace + "/leases"
	err := c.api(ctx, http.MethodPatch, path+"/"+name, "application/merge-patch+json",
		map[string]any{"spec": map[string]any{"renewTime": now, "holderIdentity": name, "leaseDurationSeconds": leaseDuration}}, nil)
	if isNotFound(err) {
		err = c.api(ctx, http.MethodPost, path, "", map[string]any{
			"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
			"metadata": map[string]any{"name": name, "namespace": leaseNamespace},
			"spec":     map[string]any{"holderIdentity": name, "leaseDurationSeconds": leaseDuration, "renewTime": now},
		}, nil)
	}
	return err
}
