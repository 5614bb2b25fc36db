package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxLog bounds each copied log: a dump is for reading.
const maxLog = 8 << 20

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Dump writes what explains a failure into <Artifacts>/<spec>/: the
// driver's pods and every container's log (controller, node plugins,
// sidecars), events of the driver's and the spec's namespaces, the
// claims, volumes, snapshots, nodes and CSINodes, and the kubelet logs
// named by E2E_KUBELET_LOGS. Errors are written into the dump instead
// of failing: a dump is best effort (the API server cannot fetch logs
// from the storage VM's kubelet, for one).
func (f *F) Dump(ctx context.Context, spec string, namespaces []string) string {
	dir := filepath.Join(f.Config.Artifacts, strings.Trim(unsafeChars.ReplaceAllString(spec, "_"), "_"))
	if len(dir) > 200 {
		dir = dir[:200]
	}
	_ = os.MkdirAll(filepath.Join(dir, "logs"), 0o755)
	var notes []string
	note := func(format string, a ...any) { notes = append(notes, fmt.Sprintf(format, a...)) }

	pods, err := f.Kube.CoreV1().Pods(f.Config.DriverNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		note("listing driver pods: %v", err)
	} else {
		var b strings.Builder
		for i := range pods.Items {
			p := &pods.Items[i]
			fmt.Fprintf(&b, "%s: %s\n", p.Name, podStatus(p))
			for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
				f.copyLog(ctx, dir, p, c.Name, false, note)
				f.copyLog(ctx, dir, p, c.Name, true, note)
			}
		}
		write(dir, "driver-pods.txt", b.String(), note)
	}
	for _, ns := range append([]string{f.Config.DriverNamespace, metav1.NamespaceDefault}, namespaces...) {
		ev, err := f.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			note("events of %s: %v", ns, err)
			continue
		}
		var b strings.Builder
		for _, e := range ev.Items {
			fmt.Fprintf(&b, "%s %s %s/%s %s: %s\n", eventTime(e).UTC().Format("15:04:05"), e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
		}
		write(dir, "events-"+ns+".txt", b.String(), note)
		if ns == f.Config.DriverNamespace || ns == metav1.NamespaceDefault {
			continue
		}
		if l, err := f.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err == nil {
			writeJSON(dir, "pods-"+ns+".json", l, note)
		}
		if l, err := f.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{}); err == nil {
			writeJSON(dir, "pvcs-"+ns+".json", l, note)
		}
		if l, err := f.Snap.SnapshotV1().VolumeSnapshots(ns).List(ctx, metav1.ListOptions{}); err == nil {
			writeJSON(dir, "volumesnapshots-"+ns+".json", l, note)
		}
	}
	if l, err := f.Kube.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{}); err == nil {
		writeJSON(dir, "pvs.json", l, note)
	}
	if l, err := f.Snap.SnapshotV1().VolumeSnapshotContents().List(ctx, metav1.ListOptions{}); err == nil {
		writeJSON(dir, "volumesnapshotcontents.json", l, note)
	}
	if l, err := f.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		writeJSON(dir, "nodes.json", l, note)
	}
	if l, err := f.Kube.StorageV1().CSINodes().List(ctx, metav1.ListOptions{}); err == nil {
		writeJSON(dir, "csinodes.json", l, note)
	}
	for _, pattern := range f.Config.KubeletLogs {
		files, _ := filepath.Glob(pattern)
		for _, src := range files {
			copyTail(src, filepath.Join(dir, "logs", "node-"+unsafeChars.ReplaceAllString(strings.TrimPrefix(src, "/"), "_")), note)
		}
	}
	write(dir, "dump-notes.txt", strings.Join(notes, "\n")+"\n", nil)
	return dir
}

func (f *F) copyLog(ctx context.Context, dir string, p *corev1.Pod, container string, previous bool, note func(string, ...any)) {
	limit := int64(maxLog)
	rc, err := f.Kube.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: container, Previous: previous, LimitBytes: &limit}).Stream(ctx)
	if err != nil {
		if !previous {
			note("log of %s/%s: %v", p.Name, container, err)
		}
		return
	}
	defer rc.Close()
	name := p.Name + "_" + container
	if previous {
		name += "_previous"
	}
	out, err := os.Create(filepath.Join(dir, "logs", name+".log"))
	if err != nil {
		note("%v", err)
		return
	}
	defer out.Close()
	_, _ = io.Copy(out, rc)
}

func write(dir, name, content string, note func(string, ...any)) {
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil && note != nil {
		note("%v", err)
	}
}

func writeJSON(dir, name string, v any, note func(string, ...any)) {
	data, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		note("%s: %v", name, err)
		return
	}
	write(dir, name, string(data), note)
}

// copyTail copies at most the last maxLog bytes of src.
func copyTail(src, dst string, note func(string, ...any)) {
	in, err := os.Open(src)
	if err != nil {
		note("%v", err)
		return
	}
	defer in.Close()
	if fi, err := in.Stat(); err == nil && fi.Size() > maxLog {
		_, _ = in.Seek(fi.Size()-maxLog, io.SeekStart)
	}
	out, err := os.Create(dst)
	if err != nil {
		note("%v", err)
		return
	}
	defer out.Close()
	_, _ = io.Copy(out, in)
}
