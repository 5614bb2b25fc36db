package suites

// Volume health events through kubernetes-csi's external-health-monitor
// controller sidecar (issue 19, item 3), on the host node with the ZFS
// simulator (E2E_VM=0 is enough: nothing mounts the volume). The chart's
// monitor (controller.externalHealthMonitor, off by default) is switched on
// for the zones release, whose controller is a Deployment (the chart refuses
// the monitor with strategy node), then, per zfs-generic family, a share
// is removed behind the driver's back (sharenfs off, the iSCSI target or
// the NVMe-oF subsystem deleted: features_health_block_test.go) and the
// monitor's event on the PVC naming it is awaited.
//
// The sidecar's image exists only where scripts/ensure-health-monitor.sh
// could build it from a source checkout (HEALTH_MONITOR_SRC): the Go module
// proxy refuses its module (403). Without the image the spec skips; CI
// cannot build it, so LAB_REQUIRE=cluster does not turn this skip into a
// failure (only LAB_REQUIRE naming "health-monitor" does).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchyard-csi/switchyard/e2e/backends"
	"github.com/switchyard-csi/switchyard/e2e/framework"
)

// healthMonitorContainer is the chart's name for the sidecar.
const healthMonitorContainer = "csi-external-health-monitor-controller"

// The three zfs-generic families share one monitor switch-on: a helm
// upgrade and a rollout of the zones controller (about a minute), done
// once in BeforeAll with every family's connection in place (the rollout
// mounts the connection Secret as it is then). Ordered so that it is
// done once, ContinueOnFailure so one family failing does not skip the
// others.
var _ = Describe("volume health events", Label("features", "health"), Ordered, ContinueOnFailure, func() {
	var conns map[string]string
	BeforeAll(func(ctx SpecContext) { conns = monitorOn(ctx) }, NodeTimeout(8*time.Minute))

	It("zfs-generic-nfs: a share removed behind the driver's back becomes the external-health-monitor's event on the PVC", Label("zfs-generic-nfs", "host", "controller"),
		func(ctx SpecContext) { healthEvent(ctx, conns, "zfs-generic-nfs", unshareNFS) }, NodeTimeout(10*time.Minute))
	It("zfs-generic-iscsi: an iSCSI target removed behind the driver's back becomes the external-health-monitor's event on the PVC naming it", Label("zfs-generic-iscsi", "host", "controller"),
		func(ctx SpecContext) { healthEvent(ctx, conns, "zfs-generic-iscsi", removeISCSITarget) }, NodeTimeout(10*time.Minute))
	It("zfs-generic-nvmeof: an NVMe-oF subsystem removed behind the driver's back becomes the external-health-monitor's event on the PVC naming it", Label("zfs-generic-nvmeof", "host", "controller"),
		func(ctx SpecContext) { healthEvent(ctx, conns, "zfs-generic-nvmeof", removeNVMeoFSubsystem) }, NodeTimeout(10*time.Minute))
})

// healthFamilies are the families whose shares the specs remove.
var healthFamilies = []string{"zfs-generic-nfs", "zfs-generic-iscsi", "zfs-generic-nvmeof"}

// skipHealthMonitor skips: the lab has no monitor image (CI never has one),
// so only LAB_REQUIRE naming "health-monitor" makes it a failure.
func skipHealthMonitor(why string) {
	GinkgoHelper()
	for _, t := range strings.Split(os.Getenv("LAB_REQUIRE"), ",") {
		if strings.TrimSpace(t) == "health-monitor" {
			Fail("LAB_REQUIRE names health-monitor but this spec cannot run: " + why)
		}
	}
	Skip(why)
}

// repoRoot is the repository: the suites run in e2e/suites (make e2e).
func repoRoot() string {
	GinkgoHelper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	Expect(err).NotTo(HaveOccurred())
	return root
}

// helmCmd runs helm (E2E_HELM, else scripts/ensure-helm.sh's) and returns
// its standard output; a failure fails the spec with helm's own words.
func helmCmd(ctx context.Context, args ...string) string {
	GinkgoHelper()
	helm := os.Getenv("E2E_HELM")
	if helm == "" {
		out, err := exec.CommandContext(ctx, filepath.Join(repoRoot(), "scripts", "ensure-helm.sh")).Output()
		Expect(err).NotTo(HaveOccurred(), "scripts/ensure-helm.sh (set E2E_HELM to a helm binary instead)")
		helm = strings.TrimSpace(string(out))
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, helm, append(args, "--kubeconfig", f.Config.Kubeconfig)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	Expect(cmd.Run()).To(Succeed(), "helm %s: %s", strings.Join(args, " "), stderr.String())
	return stdout.String()
}

// zonesRelease is the zones release's Helm name: E2E_ZONES_PROVISIONER is
// <release>-controller/csi-provisioner.
func zonesRelease() string {
	dep, _, _ := strings.Cut(f.Config.ZonesProvisioner, "/")
	return strings.TrimSuffix(dep, "-controller")
}

// monitorImage is the health monitor image the release's own values name
// (scripts/images.sh writes it into lab-values.yaml only when it built
// one); "" when they name none, so the chart's default would be pulled.
func monitorImage(ctx context.Context, release string) string {
	GinkgoHelper()
	var v struct {
		ImagePullPolicy string `json:"imagePullPolicy"`
		Controller      struct {
			ExternalHealthMonitor struct {
				Image struct{ Registry, Tag string } `json:"image"`
			} `json:"externalHealthMonitor"`
		} `json:"controller"`
	}
	out := helmCmd(ctx, "get", "values", release, "-n", f.Config.DriverNamespace, "-o", "json")
	Expect(json.Unmarshal([]byte(out), &v)).To(Succeed(), out)
	img := v.Controller.ExternalHealthMonitor.Image
	if img.Registry == "" || img.Tag == "" {
		return ""
	}
	return img.Registry + ":" + img.Tag
}

// setMonitor switches the chart's health monitor on or off for release,
// keeping its other values. On: it checks volumes every 10 s, so that the
// spec waits seconds rather than the default minutes.
func setMonitor(ctx context.Context, release string, on bool) {
	GinkgoHelper()
	args := []string{"upgrade", release, filepath.Join(repoRoot(), "deploy", "charts", "switchyard"), "-n", f.Config.DriverNamespace,
		"--reuse-values", fmt.Sprintf("--set=controller.externalHealthMonitor.enabled=%t", on)}
	if on {
		args = append(args, "--set=controller.externalHealthMonitor.extraArgs={--list-volumes-interval=10s,--monitor-interval=10s,--volume-list-add-interval=10s}")
	} else {
		args = append(args, "--set=controller.externalHealthMonitor.extraArgs=null")
	}
	helmCmd(ctx, args...)
}

// waitMonitorRunning waits until the monitor container of every pod of the
// zones controller has run for a while; a monitor that exits fails the
// spec with the end of its log (it says why it stopped).
func waitMonitorRunning(ctx context.Context, dep string) {
	GinkgoHelper()
	ns := f.Config.DriverNamespace
	var stopped string
	err := f.Wait(ctx, "the "+healthMonitorContainer+" container running in "+dep, 4*time.Minute, func(ctx context.Context) (bool, string, error) {
		pods, err := f.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return framework.Retry(err)
		}
		seen := 0
		for _, p := range pods.Items {
			if !strings.HasPrefix(p.Name, dep+"-") || p.DeletionTimestamp != nil {
				continue
			}
			for _, cs := range p.Status.ContainerStatuses {
				if cs.Name != healthMonitorContainer {
					continue
				}
				seen++
				// Stopped for good: terminated now, or waiting to be
				// restarted after it exited (a restart that then runs
				// is only a slow start).
				if cs.State.Terminated != nil || (cs.State.Waiting != nil && cs.LastTerminationState.Terminated != nil) {
					stopped = p.Name
					return true, "", nil
				}
				if r := cs.State.Running; r == nil || time.Since(r.StartedAt.Time) < 20*time.Second {
					return false, "pod " + p.Name + ": the monitor is not running yet (" + stateOf(cs) + ")", nil
				}
			}
		}
		if seen == 0 {
			return false, "no pod of " + dep + " has the monitor yet", nil
		}
		return true, "", nil
	})
	Expect(err).NotTo(HaveOccurred())
	if stopped != "" {
		Fail(fmt.Sprintf("the %s sidecar stopped in pod %s: %s", healthMonitorContainer, stopped, monitorLogTail(ctx, stopped)))
	}
}

func stateOf(cs corev1.ContainerStatus) string {
	switch {
	case cs.State.Waiting != nil:
		return "waiting: " + cs.State.Waiting.Reason + " " + cs.State.Waiting.Message
	case cs.State.Terminated != nil:
		return "terminated: " + cs.State.Terminated.Reason
	case cs.State.Running != nil:
		return "running since " + cs.State.Running.StartedAt.UTC().Format(time.RFC3339)
	}
	return "no state"
}

// monitorLogTail is the last lines the monitor logged before it stopped.
func monitorLogTail(ctx context.Context, pod string) string {
	for _, previous := range []bool{true, false} {
		raw, err := f.Kube.CoreV1().Pods(f.Config.DriverNamespace).GetLogs(pod, &corev1.PodLogOptions{
			Container: healthMonitorContainer, Previous: previous, TailLines: ptrTo(int64(6)),
		}).DoRaw(ctx)
		if err == nil && len(bytes.TrimSpace(raw)) > 0 {
			return strings.TrimSpace(string(raw))
		}
	}
	return "(no log)"
}

func ptrTo[T any](v T) *T { return &v }

// shareRemoval is what a spec took away on the storage host: the words
// the monitor's event must hold besides ShareMissing and the dataset, and
// what the driver must have removed once the volume is deleted.
type shareRemoval struct {
	mentions []string
	// leftovers lists the share's objects still on the storage host
	// (nil: nothing to check beyond the dataset).
	leftovers func(ctx context.Context) []string
}

// unshareNFS removes a dataset's NFS share on the storage host, as an
// administrator would by hand: the driver is not told.
func unshareNFS(ctx context.Context, ds string) shareRemoval {
	GinkgoHelper()
	zfsRun(ctx, "zfs set sharenfs=off "+ds)
	Expect(zfsRun(ctx, "zfs get -H -o value sharenfs "+ds)).To(Equal("off"), "the share of "+ds+" is gone on the storage host")
	return shareRemoval{mentions: []string{"NFS share", "sharenfs is \"off\""}}
}

// healthFamily is the family's row, or a skip when the lab has no ZFS host.
func healthFamily(name string) backends.Family {
	GinkgoHelper()
	fam, err := backends.Lookup(name)
	Expect(err).NotTo(HaveOccurred())
	if ok, why := fam.Available(env); !ok {
		skipOrFail(why)
	}
	return fam
}

// monitorOn puts a connection for each health family on the zones release
// and turns the chart's monitor on; both are undone after the last spec.
// It returns the connection of each family.
func monitorOn(ctx context.Context) map[string]string {
	GinkgoHelper()
	if f.Config.ZonesDriverName == "" || f.ZoneConns == nil {
		skipOrFail("no zones release (the health monitor needs a Deployment-mode controller): set E2E_ZONES_DRIVER_NAME and E2E_ZONES_CONNECTIONS (make e2e installs it)")
	}
	release := zonesRelease()
	img := monitorImage(ctx, release)
	if img == "" {
		skipHealthMonitor("no " + healthMonitorContainer + " image in this lab: the Go module proxy refuses github.com/kubernetes-csi/external-health-monitor (403), so scripts/images.sh has one only when scripts/ensure-health-monitor.sh built it from a checkout (HEALTH_MONITOR_SRC=<dir> make e2e)")
	}
	GinkgoWriter.Printf("health monitor image %s on release %s\n", img, release)

	conns := map[string]string{}
	for _, name := range healthFamilies {
		fam := healthFamily(name)
		conn := "e2e-health-" + fam.Short
		Expect(f.ZoneConns.Put(ctx, conn, fam.Connection(env, conn))).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = f.ZoneConns.Delete(ctx, conn) })
		conns[name] = conn
	}

	By("the chart's health monitor on for the zones release (helm upgrade --reuse-values)")
	dep, _, _ := strings.Cut(f.Config.ZonesProvisioner, "/")
	setMonitor(ctx, release, true)
	DeferCleanup(func(ctx context.Context) {
		setMonitor(ctx, release, false)
		f.WaitRollout(ctx, dep, 4*time.Minute)
	}, NodeTimeout(6*time.Minute))
	// The rollout also mounts the connection Secret as it is now (the
	// controller image has no cat for WaitConnectionFile).
	waitMonitorRunning(ctx, dep)
	return conns
}

// abnormal is the monitor's event reason for an unhealthy volume.
const abnormal = "VolumeConditionAbnormal"

// awaitReason waits for an event with the reason on the PVC; a timeout
// error says which events there were.
func awaitReason(ctx context.Context, ns, pvc, reason string, timeout time.Duration) (corev1.Event, error) {
	var ev corev1.Event
	err := f.Wait(ctx, "a "+reason+" event on "+pvc, timeout, func(ctx context.Context) (bool, string, error) {
		list, err := f.Events(ctx, ns, pvc)
		if err != nil {
			return framework.Retry(err)
		}
		for _, e := range list {
			if e.Reason == reason {
				ev = e
				return true, "", nil
			}
		}
		if len(list) == 0 {
			return false, "no events", nil
		}
		last := list[len(list)-1]
		return false, "last event: " + last.Reason + ": " + last.Message, nil
	})
	return ev, err
}

// healthEvent makes an Immediate PVC of the family on the zones release,
// sees no abnormal event while it is whole, takes its share away with
// remove and awaits the monitor's event naming what is missing. Deleting
// the PVC then removes the volume and what remove left of its share.
func healthEvent(ctx context.Context, conns map[string]string, family string, remove func(context.Context, string) shareRemoval) {
	fam := healthFamily(family)
	conn := conns[family]
	Expect(conn).NotTo(BeEmpty(), "BeforeAll made no connection for "+family)

	ns := f.Namespace(ctx, "health")
	sc := f.StorageClass(ctx, "health", framework.Class{Driver: f.Config.ZonesDriverName, Parameters: fam.StorageParameters(env, conn),
		Binding: storagev1.VolumeBindingImmediate}).Name
	By("an Immediate PVC, healthy: no abnormal event")
	f.PVC(ctx, ns, "data", framework.Claim{Class: sc, Size: dataSize})
	_, pv := f.WaitPVCBound(ctx, ns, "data", 5*time.Minute)
	ds := zfsDataset(conn, strings.TrimPrefix(pv.Spec.CSI.VolumeHandle, "v:"+conn+"/"))
	// Three of the monitor's 10 s rounds.
	if ev, err := awaitReason(ctx, ns, "data", abnormal, 30*time.Second); err == nil {
		Fail("an abnormal condition was reported before anything was removed: " + ev.Message)
	}

	By("its share removed on the storage host, behind the driver's back")
	gone := remove(ctx, ds)
	removed := time.Now()

	By("the monitor's event on the PVC names what is missing")
	ev, err := awaitReason(ctx, ns, "data", abnormal, 2*time.Minute) // twelve rounds
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("event %s/%s from %s after %s: %s\n", ev.Type, ev.Reason, ev.Source.Component, time.Since(removed).Round(time.Second), ev.Message)
	Expect(ev.Type).To(Equal(corev1.EventTypeWarning))
	Expect(ev.Message).To(And(ContainSubstring("ShareMissing"), ContainSubstring(ds)), "the event names the missing share and the dataset")
	for _, m := range gone.mentions {
		Expect(ev.Message).To(ContainSubstring(m), "the event names what was removed")
	}
	Expect(ev.Source.Component).To(ContainSubstring("csi-pv-monitor-controller"), "the event is the monitor's")

	By("the PVC deleted: DeleteVolume copes with the share that is gone")
	f.DeletePVC(ctx, ns, "data")
	expectNothingLeft(ctx, fam, conn, nil)
	if gone.leftovers != nil {
		Expect(gone.leftovers(ctx)).To(BeEmpty(), "the share's remaining objects are removed with the volume")
	}
}
