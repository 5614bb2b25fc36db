package main

// `switchyard orphans --delete`: removes what the report listed as on the
// backend with no Kubernetes object, and nothing else.
//
// Only objects the driver made can be deleted: the candidates come from
// the driver's own ListVolumes and ListSnapshots, which list only datasets
// carrying its properties (democratic-csi:managed_resource and the volume
// name), and each is removed through the driver's DeleteVolume or
// DeleteSnapshot, which act on that one object. A dataset someone made by
// hand next to them is never listed, so never a candidate. Nothing is
// deleted unless every backend could be listed (findOrphans fails first).

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/status"
)

// stdin is where the confirmation is read; tests replace it.
var stdin io.Reader = os.Stdin

// deleteOrphans asks (unless yes), then deletes snapshots first (a volume
// with snapshots may refuse deletion), then volumes. A volume that a
// snapshot Kubernetes knows was taken from is kept: deleting it could take
// the snapshot with it. It returns the exit code: 0 when all went, 1 when
// any failed or the user declined.
func deleteOrphans(ctx context.Context, c csipb.ControllerServer, r orphanReport, yes bool, in io.Reader, stdout, stderr io.Writer) int {
	vols, kept := deletableVolumes(r)
	for _, k := range kept {
		fmt.Fprintf(stdout, "kept %s: %s\n", k[0], k[1])
	}
	n := len(r.Snapshots) + len(vols)
	if n == 0 {
		fmt.Fprintln(stdout, "nothing to delete")
		return 0
	}
	if !yes {
		fmt.Fprintf(stdout, "delete these %d snapshots and %d volumes from the backends? This cannot be undone. Type yes to continue: ", len(r.Snapshots), len(vols))
		line, _ := bufio.NewReader(in).ReadString('\n')
		if strings.TrimSpace(line) != "yes" {
			fmt.Fprintln(stdout, "\nnot confirmed: nothing was deleted")
			return 1
		}
	}
	failed := 0
	for _, s := range r.Snapshots {
		if _, err := c.DeleteSnapshot(ctx, &csipb.DeleteSnapshotRequest{SnapshotId: s}); err != nil {
			fmt.Fprintf(stderr, "snapshot %s not deleted: %s\n", s, status.Convert(err).Message())
			failed++
			continue
		}
		fmt.Fprintf(stdout, "deleted snapshot %s\n", s)
	}
	for _, v := range vols {
		if _, err := c.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: v}); err != nil {
			fmt.Fprintf(stderr, "volume %s not deleted: %s\n", v, status.Convert(err).Message())
			failed++
			continue
		}
		fmt.Fprintf(stdout, "deleted volume %s\n", v)
	}
	fmt.Fprintf(stdout, "deleted %d of %d\n", n-failed, n)
	if failed > 0 {
		return 1
	}
	return 0
}

// deletableVolumes is r.Volumes without those a snapshot Kubernetes knows
// (one not among the orphans) was taken from; kept pairs a volume with why.
func deletableVolumes(r orphanReport) (vols []string, kept [][2]string) {
	orphanSnap := map[string]bool{}
	for _, s := range r.Snapshots {
		orphanSnap[s] = true
	}
	needed := map[string]string{}
	for snap, src := range r.sources {
		if !orphanSnap[snap] && src != "" {
			needed[src] = snap
		}
	}
	for _, v := range r.Volumes {
		if snap, ok := needed[v]; ok {
			kept = append(kept, [2]string{v, "snapshot " + snap + ", which Kubernetes knows, was taken from it"})
			continue
		}
		vols = append(vols, v)
	}
	return vols, kept
}
