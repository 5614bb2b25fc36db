package framework

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func envOf(c corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

// A Stop workload's STOP file is the downward-API projection of the
// annotation StopPod sets; without Stop the script is told no file.
func TestWorkloadStopWiresTheAnnotationToTheScript(t *testing.T) {
	p := workloadPod("ns", "img", Workload{Name: "writer", PVC: "data", Block: true, Script: WriterScript, Stop: true})
	c := p.Spec.Containers[0]
	stop, _ := envOf(c, "STOP")
	var mount *corev1.VolumeMount
	for i := range c.VolumeMounts {
		if c.VolumeMounts[i].Name == "stop" {
			mount = &c.VolumeMounts[i]
		}
	}
	if mount == nil || stop != mount.MountPath+"/stop" {
		t.Fatalf("STOP=%q, stop mount %+v: want the file stop in the mounted volume", stop, mount)
	}
	var dapi *corev1.DownwardAPIVolumeSource
	for _, v := range p.Spec.Volumes {
		if v.Name == "stop" {
			dapi = v.DownwardAPI
		}
	}
	if dapi == nil || len(dapi.Items) != 1 || dapi.Items[0].Path != "stop" || dapi.Items[0].FieldRef == nil ||
		dapi.Items[0].FieldRef.FieldPath != "metadata.annotations['"+StopAnnotation+"']" {
		t.Fatalf("stop volume %+v: want the annotation %s projected as stop", dapi, StopAnnotation)
	}
	if len(c.VolumeDevices) != 1 || c.VolumeDevices[0].DevicePath != DevicePath {
		t.Fatalf("block device %+v", c.VolumeDevices)
	}

	plain := workloadPod("ns", "img", Workload{Name: "writer", PVC: "data", Script: WriterScript})
	if v, ok := envOf(plain.Spec.Containers[0], "STOP"); !ok || v != "" {
		t.Fatalf("STOP=%q (%t) without Stop: want it set and empty (the script runs with set -u)", v, ok)
	}
	if len(plain.Spec.Volumes) != 1 {
		t.Fatalf("volumes %+v: want only the claim", plain.Spec.Volumes)
	}
}
