package framework

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// Metrics the suites record.
const (
	PVCToBound      = "PVC→Bound"
	PVCToPodRunning = "PVC→pod Running"
	SnapshotReady   = "VolumeSnapshot→ready"
	RestoreToBound  = "restore PVC→Bound"
	ExpandInPod     = "expand→seen in pod"
	// ExpandCapacity: the PVC reports the new size (the kubelet's
	// NodeExpandVolume is done, for an online expansion).
	ExpandCapacity = "expand→PVC capacity"
)

// Sample is one measurement.
type Sample struct {
	Backend string        `json:"backend"`
	Mode    string        `json:"mode"` // topology mode or volume mode
	Metric  string        `json:"metric"`
	D       time.Duration `json:"ns"`
}

// Timings collects samples from every spec of the run.
type Timings struct {
	mu      sync.Mutex
	samples []Sample
}

// NewTimings is an empty collection.
func NewTimings() *Timings { return &Timings{} }

// Record adds a sample.
func (t *Timings) Record(backend, mode, metric string, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.samples = append(t.samples, Sample{backend, mode, metric, d})
}

// Since records the time from start to now.
func (t *Timings) Since(backend, mode, metric string, start time.Time) time.Duration {
	d := time.Since(start)
	t.Record(backend, mode, metric, d)
	return d
}

// Table is one line per backend, mode and metric: count, min, median, max.
func (t *Timings) Table() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	type key struct{ b, m, metric string }
	groups := map[key][]time.Duration{}
	var keys []key
	for _, s := range t.samples {
		k := key{s.Backend, s.Mode, s.Metric}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], s.D)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if keys[i].b != keys[j].b {
			return keys[i].b < keys[j].b
		}
		if keys[i].m != keys[j].m {
			return keys[i].m < keys[j].m
		}
		return keys[i].metric < keys[j].metric
	})
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "backend\tmode\tmetric\tn\tmin\tmedian\tmax")
	for _, k := range keys {
		ds := groups[k]
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", k.b, k.m, k.metric, len(ds), secs(ds[0]), secs(ds[len(ds)/2]), secs(ds[len(ds)-1]))
	}
	w.Flush()
	return b.String()
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

// Write puts timings.txt (the table) and timings.json (every sample) in dir.
func (t *Timings) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "timings.txt"), []byte(t.Table()), 0o644); err != nil {
		return err
	}
	t.mu.Lock()
	data, err := json.MarshalIndent(t.samples, "", "  ")
	t.mu.Unlock()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "timings.json"), data, 0o644)
}
