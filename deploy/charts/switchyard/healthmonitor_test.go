package chart_test

import (
	"strings"
	"testing"
)

const healthMonitor = "csi-external-health-monitor-controller"

// TestHealthMonitor: controller.externalHealthMonitor adds the sidecar to
// the controller Deployment, on the driver's socket, with leader election,
// its extraArgs and (with sidecar metrics) its own endpoint, and grants it
// what its upstream RBAC lists; it is off by default.
func TestHealthMonitor(t *testing.T) {
	all := docs(t, render(t, "-f", "testdata/values/health-monitor.yaml"))
	d := find(t, all, "Deployment", "-controller")
	hm := container(t, d, healthMonitor)
	if img := hm["image"].(string); !strings.HasPrefix(img, "registry.k8s.io/sig-storage/csi-external-health-monitor-controller:v0.") {
		t.Errorf("image %s", img)
	}
	args := strs(hm["args"])
	for _, want := range []string{"--csi-address=/csi-data/csi.sock", "--leader-election", "--leader-election-namespace=" + namespace,
		"--list-volumes-interval=10m", "--monitor-interval=1m", "--http-endpoint=:9815"} {
		if !has(args, want) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
	if m := mountOf(hm, "socket-dir"); m == nil || m["mountPath"] != "/csi-data" {
		t.Errorf("socket mount %v", m)
	}
	if p := portsOf(hm)["metrics-health"]; p != 9815 {
		t.Errorf("ports %v; want metrics-health 9815", hm["ports"])
	}
	svc := find(t, all, "Service", "-controller-metrics")
	found := false
	for _, p := range get(svc, "spec", "ports").([]any) {
		found = found || p.(obj)["targetPort"] == "metrics-health"
	}
	if !found {
		t.Errorf("the metrics Service lacks the health monitor's port: %v", get(svc, "spec", "ports"))
	}

	// RBAC: get/list/watch of PVs, PVCs, Pods and Nodes, events, the PVC status.
	need := map[string][]string{
		"persistentvolumes": {"get", "list", "watch"}, "persistentvolumeclaims": {"get", "list", "watch"},
		"pods": {"get", "list", "watch"}, "nodes": {"get", "list", "watch"},
		"events": {"create", "patch"}, "persistentvolumeclaims/status": {"patch"},
	}
	rules := get(find(t, all, "ClusterRole", "-controller"), "rules").([]any)
	for res, verbs := range need {
		for _, v := range verbs {
			if !allows(rules, "", res, v) {
				t.Errorf("the controller ClusterRole does not allow %s on %s", v, res)
			}
		}
	}
	lease := get(find(t, all, "Role", "-controller"), "rules").([]any)
	if !allows(lease, "coordination.k8s.io", "leases", "create") || !allows(lease, "coordination.k8s.io", "leases", "update") {
		t.Error("no lease rights for the health monitor's leader election")
	}

	t.Run("off by default", func(t *testing.T) {
		for _, c := range get(find(t, docs(t, render(t, "-f", "testdata/values/minimal.yaml")), "Deployment", "-controller"), "spec", "template", "spec", "containers").([]any) {
			if c.(obj)["name"] == healthMonitor {
				t.Error("the health monitor runs without controller.externalHealthMonitor.enabled")
			}
		}
	})
	t.Run("democratic-csi's key", func(t *testing.T) {
		on := docs(t, render(t, "-f", "testdata/values/minimal.yaml", "--set", "controller.externalHealthMonitorController.enabled=true",
			"--set", "controller.externalHealthMonitorController.image.tag=v0.16.0"))
		if img := container(t, find(t, on, "Deployment", "-controller"), healthMonitor)["image"]; img != "registry.k8s.io/sig-storage/csi-external-health-monitor-controller:v0.16.0" {
			t.Errorf("image %v: democratic-csi's image.tag not used", img)
		}
		if !allows(get(find(t, on, "ClusterRole", "-controller"), "rules").([]any), "", "persistentvolumeclaims/status", "patch") {
			t.Error("enabled through democratic-csi's key without its RBAC")
		}
		// democratic-csi's proxy values file turns it off explicitly.
		for _, c := range get(find(t, docs(t, render(t, "-f", "testdata/values/democratic-csi-proxy.yaml")), "Deployment", "-controller"), "spec", "template", "spec", "containers").([]any) {
			if c.(obj)["name"] == healthMonitor {
				t.Error("runs although the democratic-csi values say enabled: false")
			}
		}
	})
	t.Run("refused with strategy node", func(t *testing.T) {
		_, err := helm(t, "template", release, ".", "--kube-version", kubeVersion, "-f", "testdata/values/node-strategy.yaml", "--set", "controller.externalHealthMonitor.enabled=true")
		if err == nil || !strings.Contains(err.Error(), "controller.externalHealthMonitor.enabled needs controller.strategy deployment") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("port clash named", func(t *testing.T) {
		_, err := helm(t, "template", release, ".", "--kube-version", kubeVersion, "-f", "testdata/values/health-monitor.yaml", "--set", "metrics.sidecars.ports.healthMonitor=9810")
		if err == nil || !strings.Contains(err.Error(), "metrics.sidecars.ports.healthMonitor") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("unknown key refused", func(t *testing.T) {
		_, err := helm(t, "template", release, ".", "--kube-version", kubeVersion, "-f", "testdata/values/minimal.yaml", "--set", "controller.externalHealthMonitor.enable=true")
		if err == nil || !strings.Contains(err.Error(), "enable") {
			t.Errorf("got %v", err)
		}
	})
}

// allows: does one of rules grant verb on resource in apiGroup?
func allows(rules []any, group, resource, verb string) bool {
	for _, r := range rules {
		if has(strs(r.(obj)["apiGroups"]), group) && has(strs(r.(obj)["resources"]), resource) && has(strs(r.(obj)["verbs"]), verb) {
			return true
		}
	}
	return false
}
