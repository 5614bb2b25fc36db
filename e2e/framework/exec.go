package framework

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
)

// Exec runs cmd in a container and returns its stdout and stderr.
func (f *F) Exec(ctx context.Context, ns, pod, container string, cmd ...string) (string, string, error) {
	req := f.Kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(f.Rest, "POST", req.URL())
	if err != nil {
		return "", "", err
	}
	var out, errb bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errb})
	return out.String(), errb.String(), err
}

// ConnectionsPath is where the chart mounts the connections Secret.
const ConnectionsPath = "/mnt/connections"

// WaitConnectionFile waits until every running pod of the driver's
// namespace that mounts ConnectionsPath and belongs to release (the
// app.kubernetes.io/instance label) sees conn's file with content (""
// waits for it to be gone). The kubelet refreshes a mounted Secret about
// a minute after it changes: a spec that needs the driver to see a new
// file waits here rather than fail its first call (the provisioner then
// delays its retries). It returns how long the file took to arrive.
func (f *F) WaitConnectionFile(ctx context.Context, release, conn, content string, timeout time.Duration) time.Duration {
	ginkgo.GinkgoHelper()
	start := time.Now()
	path := ConnectionsPath + "/" + FileKey(conn)
	must(f.Wait(ctx, "the driver's pods to see "+path, timeout, func(ctx context.Context) (bool, string, error) {
		pods, err := f.Kube.CoreV1().Pods(f.Config.DriverNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + release})
		if err != nil {
			return Retry(err)
		}
		checked := 0
		for _, p := range pods.Items {
			// Only pods that serve: not one being deleted, and not one on
			// a node that is not Ready (a node of an earlier run, such as
			// the storage VM's when this run has none, keeps its pods
			// "Running" with an address nothing answers on).
			if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil || !f.nodeReady(ctx, p.Spec.NodeName) {
				continue
			}
			for _, c := range p.Spec.Containers {
				if !mounts(c, ConnectionsPath) {
					continue
				}
				out, _, err := f.Exec(ctx, p.Namespace, p.Name, c.Name, "cat", path)
				if content == "" {
					if err == nil {
						return false, p.Name + " still has it", nil
					}
				} else if err != nil || out != content {
					return false, fmt.Sprintf("%s/%s: %s", p.Name, c.Name, firstLine(out, err)), nil
				}
				checked++
			}
		}
		if checked == 0 {
			return false, "no running pod of release " + release + " mounts " + ConnectionsPath, nil
		}
		return true, "", nil
	}))
	return time.Since(start)
}

// nodeReady reports whether node's Ready condition is True.
func (f *F) nodeReady(ctx context.Context, node string) bool {
	n, err := f.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func mounts(c corev1.Container, path string) bool {
	for _, m := range c.VolumeMounts {
		if m.MountPath == path {
			return true
		}
	}
	return false
}

func firstLine(out string, err error) string {
	if err != nil {
		return err.Error()
	}
	l, _, _ := strings.Cut(out, "\n")
	return "has other content: " + l
}
