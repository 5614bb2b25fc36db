package chart_test

import (
	"strings"
	"testing"
)

// TestProbeSettings: livenessProbe.* reaches the kubelet's probe of both
// switchyard containers and the sidecars' --probe-timeout; the defaults
// are the chart's earlier fixed ones, without a --probe-timeout.
func TestProbeSettings(t *testing.T) {
	for _, c := range []struct {
		file, timeoutArg string
		probe            map[string]any
	}{
		{"minimal.yaml", "", map[string]any{"initialDelaySeconds": 10, "timeoutSeconds": 3, "periodSeconds": 10, "failureThreshold": 5}},
		{"probes.yaml", "--probe-timeout=4s", map[string]any{"initialDelaySeconds": 30, "timeoutSeconds": 6, "periodSeconds": 20, "failureThreshold": 3}},
	} {
		t.Run(c.file, func(t *testing.T) {
			all := docs(t, render(t, "-f", "testdata/values/"+c.file))
			for _, w := range []obj{find(t, all, "Deployment", "-controller"), find(t, all, "DaemonSet", "-node")} {
				name := get(w, "metadata", "name")
				p := container(t, w, "switchyard")["livenessProbe"].(obj)
				for k, v := range c.probe {
					if p[k] != v {
						t.Errorf("%s: livenessProbe.%s = %v, want %v", name, k, p[k], v)
					}
				}
				var got string
				for _, a := range strs(container(t, w, "liveness-probe")["args"]) {
					if strings.HasPrefix(a, "--probe-timeout") {
						got = a
					}
				}
				if got != c.timeoutArg {
					t.Errorf("%s: liveness-probe sidecar has %q, want %q", name, got, c.timeoutArg)
				}
			}
		})
	}
}

// TestProbeRefusals: a sidecar timeout the kubelet would not wait for, and
// values the kubelet refuses, fail at render time naming the key.
func TestProbeRefusals(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"livenessProbe.probeTimeout=3s", "livenessProbe.probeTimeout 3s is not below livenessProbe.timeoutSeconds 3"},
		{"livenessProbe.probeTimeout=1m", "not below"},
		{"livenessProbe.probeTimeout=4s,livenessProbe.timeoutSeconds=3", "raise timeoutSeconds"},
		{"livenessProbe.probeTimeout=soon", "probeTimeout"},
		{"livenessProbe.periodSeconds=0", "periodSeconds"},
		{"livenessProbe.timeoutSecond=5", "timeoutSecond"},
	} {
		t.Run(c.set, func(t *testing.T) {
			_, err := helm(t, "template", release, ".", "--kube-version", kubeVersion, "-f", "testdata/values/minimal.yaml", "--set", c.set)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
	t.Run("below the kubelet's timeout", func(t *testing.T) {
		render(t, "-f", "testdata/values/minimal.yaml", "--set", "livenessProbe.probeTimeout=2500ms")
	})
}
