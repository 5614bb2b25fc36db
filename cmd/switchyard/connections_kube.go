package main

// `switchyard connections --kubeconfig`: next to what the backends hold
// (VOLUMES), what the cluster holds (PVS): the PersistentVolumes of the
// driver that name each connection in their handle (v:<connection>/…).
// A connection that PersistentVolumes name but the connections folder has
// no file for is a problem (its volumes cannot be reached or deleted).

import (
	"fmt"
	"sort"

	"github.com/switchyard-csi/switchyard/driver/proxy"
)

// singleBackend is the row name of a main config without the proxy.
const singleBackend = "(main config)"

// withPVCounts fills each row's PVS and adds a row for every connection
// the PersistentVolumes name that rows lack. fromConfig: rows are every
// connection file, so a missing one is a problem; over the socket rows
// show only connections holding volumes, and alone there are no rows.
func withPVCounts(rows []connRow, volumeHandles []string, fromConfig bool) []connRow {
	counts := map[string]int{}
	for _, h := range volumeHandles {
		conn, _, ok := proxy.Parse(proxy.VolumePrefix, h)
		if !ok {
			conn = singleBackend
		}
		counts[conn]++
	}
	seen := map[string]bool{}
	for i := range rows {
		rows[i].pvs = fmt.Sprint(counts[rows[i].name])
		seen[rows[i].name] = true
	}
	var extra []string
	for conn := range counts {
		if !seen[conn] {
			extra = append(extra, conn)
		}
	}
	sort.Strings(extra)
	for _, conn := range extra {
		r := connRow{name: conn, state: "in the cluster", typ: "-", family: "-", version: "-", volumes: "-", pvs: fmt.Sprint(counts[conn])}
		if fromConfig {
			r.state = "no file"
			r.problem = fmt.Sprintf("%d PersistentVolumes name connection %s, but the connections folder has no file for it", counts[conn], conn)
		}
		rows = append(rows, r)
	}
	return rows
}
