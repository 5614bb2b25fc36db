package framework

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Workload is a test pod on one claim.
type Workload struct {
	Name  string
	PVC   string
	Block bool
	// Script is WriterScript or ReaderScript; Env adds to its variables.
	Script string
	Env    map[string]string
	// Node pins the pod by the kubernetes.io/hostname label (the
	// scheduler still decides, so WaitForFirstConsumer works); "" lets
	// the scheduler choose.
	Node string
	// TolerateAll lets the pod onto nodes tainted not-ready or
	// unreachable: the fake nodes of other zones, which run nothing.
	TolerateAll bool
	// Stop keeps a writer running after it saw the volume grow until the
	// spec calls StopPod (the STOP variable of the scripts): the kubelet
	// finishes an online expansion (NodeExpandVolume) only for a running
	// pod, as a real workload keeps its volume.
	Stop bool
}

// Where the stop annotation appears in a pod with Workload.Stop.
const (
	StopAnnotation = "switchyard.e2e/stop"
	stopDir        = "/etc/e2e-stop"
)

// Pod creates the workload's pod; it is deleted, and waited for, when the
// spec ends.
func (f *F) Pod(ctx context.Context, ns string, w Workload) *corev1.Pod {
	ginkgo.GinkgoHelper()
	pod, err := f.Kube.CoreV1().Pods(ns).Create(ctx, workloadPod(ns, f.Config.Image, w), metav1.CreateOptions{})
	must(err)
	ginkgo.DeferCleanup(func(ctx context.Context) { f.DeletePod(ctx, ns, w.Name) }, ginkgo.NodeTimeout(f.Config.Scale(4*time.Minute)))
	return pod
}

// workloadPod is the pod of a workload, running the script in image.
func workloadPod(ns, image string, w Workload) *corev1.Pod {
	grace := int64(2)
	automount := false
	env := []corev1.EnvVar{{Name: "TERMLOG", Value: "/dev/termination-log"}, {Name: "READY", Value: "/tmp/ready"},
		{Name: "DATA", Value: ""}, {Name: "DEV", Value: ""}, {Name: "TARGET_KIB", Value: "0"}, {Name: "WAIT", Value: "600"}, {Name: "STOP", Value: ""}}
	if w.Block {
		env = setEnv(env, "DEV", DevicePath)
	} else {
		env = setEnv(env, "DATA", MountPath)
	}
	for k, v := range w.Env {
		env = setEnv(env, k, v)
	}
	c := corev1.Container{
		Name:            "test",
		Image:           image,
		ImagePullPolicy: corev1.PullNever,
		Command:         []string{"sh", "-c", w.Script},
		Env:             env,
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/ready"}}},
			PeriodSeconds: 1,
		},
	}
	if w.Block {
		c.VolumeDevices = []corev1.VolumeDevice{{Name: "vol", DevicePath: DevicePath}}
	} else {
		c.VolumeMounts = []corev1.VolumeMount{{Name: "vol", MountPath: MountPath}}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: ns, Labels: map[string]string{LabelKey: "true"}},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			AutomountServiceAccountToken:  &automount,
			Containers:                    []corev1.Container{c},
			Volumes: []corev1.Volume{{Name: "vol", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: w.PVC},
			}}},
		},
	}
	if w.Stop {
		// The kubelet refreshes a downward-API volume when the pod's
		// annotations change: the only way in without exec (see
		// scripts.go).
		c := &pod.Spec.Containers[0]
		c.Env = setEnv(c.Env, "STOP", stopDir+"/stop")
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "stop", MountPath: stopDir, ReadOnly: true})
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "stop", VolumeSource: corev1.VolumeSource{
			DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{{
				Path: "stop", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + StopAnnotation + "']"},
			}}},
		}})
	}
	if w.Node != "" {
		pod.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": w.Node}
	}
	if w.TolerateAll {
		pod.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	}
	return pod
}

func setEnv(env []corev1.EnvVar, k, v string) []corev1.EnvVar {
	for i := range env {
		if env[i].Name == k {
			env[i].Value = v
			return env
		}
	}
	return append(env, corev1.EnvVar{Name: k, Value: v})
}

// StopPod tells a pod made with Workload.Stop to finish: it sets the stop
// annotation, which the kubelet writes into the pod's STOP file.
func (f *F) StopPod(ctx context.Context, ns, name string) {
	ginkgo.GinkgoHelper()
	patch := `{"metadata":{"annotations":{"` + StopAnnotation + `":"stop"}}}`
	_, err := f.Kube.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	must(err)
}

// KiB is a size for TARGET_KIB.
func KiB(bytes int64) string { return strconv.FormatInt(bytes/1024, 10) }

// DeletePod deletes a pod and waits until it is gone (its volumes are
// unpublished and unstaged by then).
func (f *F) DeletePod(ctx context.Context, ns, name string) {
	ginkgo.GinkgoHelper()
	opts := metav1.DeleteOptions{}
	// A pod bound to a fake node has no kubelet to confirm its end.
	if p, err := f.Kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); err == nil && p.Spec.NodeName != "" {
		if n, err := f.Kube.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{}); err == nil && n.Labels[FakeLabel] == "true" {
			zero := int64(0)
			opts.GracePeriodSeconds = &zero
		}
	}
	err := f.Kube.CoreV1().Pods(ns).Delete(ctx, name, opts)
	if apierrors.IsNotFound(err) {
		return
	}
	must(err)
	must(f.Wait(ctx, "pod "+ns+"/"+name+" to be deleted (its volume unmounted)", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
		p, err := f.Kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return Retry(err)
		}
		return false, podStatus(p) + f.lastEvent(ctx, ns, name), nil
	}))
}

// podStatus is a one-line summary: phase, container state, message.
func podStatus(p *corev1.Pod) string {
	s := "phase " + string(p.Status.Phase)
	if p.Spec.NodeName != "" {
		s += " on " + p.Spec.NodeName
	}
	for _, c := range p.Status.ContainerStatuses {
		switch {
		case c.State.Waiting != nil:
			s += fmt.Sprintf(", %s waiting: %s %s", c.Name, c.State.Waiting.Reason, c.State.Waiting.Message)
		case c.State.Terminated != nil:
			s += fmt.Sprintf(", %s exited %d: %s", c.Name, c.State.Terminated.ExitCode, strings.TrimSpace(c.State.Terminated.Message))
		case c.State.Running != nil:
			s += fmt.Sprintf(", %s running, ready %v", c.Name, c.Ready)
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			s += fmt.Sprintf(", %s: %s", c.Type, c.Message)
		}
	}
	return s
}

// WaitPodReady waits for the pod's readiness (the writer has written);
// a pod that ends first fails the wait at once with its message.
func (f *F) WaitPodReady(ctx context.Context, ns, name string, timeout time.Duration) *corev1.Pod {
	ginkgo.GinkgoHelper()
	var pod *corev1.Pod
	must(f.Wait(ctx, "pod "+ns+"/"+name+" to be Ready", timeout, func(ctx context.Context) (bool, string, error) {
		p, err := f.Kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return Retry(err)
		}
		pod = p
		if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
			return false, "", fmt.Errorf("the pod ended before it was ready: %s", podStatus(p))
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return true, "", nil
			}
		}
		return false, podStatus(p) + f.lastEvent(ctx, ns, name), nil
	}))
	return pod
}

// WaitPodRunning waits for phase Running.
func (f *F) WaitPodRunning(ctx context.Context, ns, name string, timeout time.Duration) *corev1.Pod {
	ginkgo.GinkgoHelper()
	var pod *corev1.Pod
	must(f.Wait(ctx, "pod "+ns+"/"+name+" to be Running", timeout, func(ctx context.Context) (bool, string, error) {
		p, err := f.Kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return Retry(err)
		}
		pod = p
		if p.Status.Phase == corev1.PodFailed {
			return false, "", fmt.Errorf("the pod failed: %s", podStatus(p))
		}
		return p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodSucceeded, podStatus(p) + f.lastEvent(ctx, ns, name), nil
	}))
	return pod
}

// WaitPodSucceeded waits for the pod to end and returns its termination
// message; when the pod fails, so does the spec, with the message.
func (f *F) WaitPodSucceeded(ctx context.Context, ns, name string, timeout time.Duration) string {
	ginkgo.GinkgoHelper()
	var msg string
	must(f.Wait(ctx, "pod "+ns+"/"+name+" to succeed", timeout, func(ctx context.Context) (bool, string, error) {
		p, err := f.Kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return Retry(err)
		}
		switch p.Status.Phase {
		case corev1.PodFailed:
			return false, "", fmt.Errorf("the pod failed: %s", podStatus(p))
		case corev1.PodSucceeded:
			for _, c := range p.Status.ContainerStatuses {
				if c.State.Terminated != nil {
					msg = strings.TrimSpace(c.State.Terminated.Message)
				}
			}
			return true, "", nil
		}
		return false, podStatus(p) + f.lastEvent(ctx, ns, name), nil
	}))
	return msg
}
