package soak

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/switchyard-csi/switchyard/lab/infiniahost"
	"github.com/switchyard-csi/switchyard/lab/truenashost"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
	"github.com/switchyard-csi/switchyard/simulators/faults"
)

// Simulator names, as the report and the fault schedule call them.
const (
	simZFS     = "zfs-ssh"
	simTrueNAS = "truenas"
	simInfinia = "infinia"
)

// hosts are the three simulated storage hosts. Each can be restarted on
// its state directory and address; the current instance is read under mu.
type hosts struct {
	dir string
	log *slog.Logger

	mu      sync.Mutex
	zfs     *zfshost.Host
	tn      *truenashost.Host
	inf     *infiniahost.Host
	zfsAddr string
	tnAddr  string
	tnSSH   string
	tnKey   string
	infAddr string
	rate    float64
	// counts of fault sets that a restart retired
	retired map[string]faults.Counts
}

func startHosts(dir string, rate float64) (*hosts, error) {
	h := &hosts{dir: dir, rate: rate, log: slog.New(slog.NewTextHandler(io.Discard, nil)), retired: map[string]faults.Counts{}}
	for _, sim := range []string{simZFS, simTrueNAS, simInfinia} {
		if err := h.start(sim); err != nil {
			h.close()
			return nil, err
		}
	}
	return h, nil
}

// start starts sim (again, on its first address), with the error rate armed.
func (h *hosts) start(sim string) error {
	switch sim {
	case simZFS:
		z, err := zfshost.Start(zfshost.Options{Dir: filepath.Join(h.dir, "zfs-host"), PoolSize: 1 << 40, Addr: h.zfsAddr, Logger: h.log})
		if err != nil {
			return err
		}
		h.zfs, h.zfsAddr = z, z.Addr
	case simTrueNAS:
		t, err := truenashost.Start(truenashost.Options{Dir: filepath.Join(h.dir, "truenas"), Version: "25.10", PoolSize: 1 << 40, SSH: true,
			Addr: h.tnAddr, SSHAddr: h.tnSSH, APIKey: h.tnKey, Logger: h.log})
		if err != nil {
			return err
		}
		h.tn, h.tnKey = t, t.APIKey
		h.tnAddr = fmt.Sprintf("%s:%d", t.Host, t.Port)
		h.tnSSH = fmt.Sprintf("%s:%d", t.Host, t.SSHPort)
	case simInfinia:
		i, err := infiniahost.Start(context.Background(), infiniahost.Options{Dir: filepath.Join(h.dir, "infinia"), Addr: h.infAddr, Logger: h.log})
		if err != nil {
			return err
		}
		h.inf = i
		h.infAddr = i.URL[len("https://"):]
	}
	for _, f := range h.faultSets(sim) {
		f.SetErrorRate("", h.rate)
	}
	return nil
}

// faultSets are sim's fault controls (TrueNAS: the API and the SSH endpoint).
func (h *hosts) faultSets(sim string) []*faults.Set {
	switch sim {
	case simZFS:
		return []*faults.Set{h.zfs.Server.Faults().Set}
	case simTrueNAS:
		return []*faults.Set{h.tn.Server.Faults(), h.tn.Server.SSHFaults().Set}
	case simInfinia:
		return []*faults.Set{h.inf.Server.Faults()}
	}
	return nil
}

// restart stops sim (dropping every connection, waiting for its calls in
// flight) and starts it again on the same state directory and address.
func (h *hosts) restart(sim string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range h.faultSets(sim) {
		h.retire(sim, f.Counts())
	}
	switch sim {
	case simZFS:
		h.zfs.Close()
	case simTrueNAS:
		h.tn.Close()
	case simInfinia:
		h.inf.Close()
	}
	return h.start(sim)
}

func (h *hosts) retire(sim string, c faults.Counts) {
	r := h.retired[sim]
	r.Errors += c.Errors
	r.Drops += c.Drops
	r.Delayed += c.Delayed
	h.retired[sim] = r
}

// each runs fn on every current fault set, under the lock.
func (h *hosts) each(fn func(sim string, f *faults.Set)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, sim := range []string{simZFS, simTrueNAS, simInfinia} {
		for _, f := range h.faultSets(sim) {
			fn(sim, f)
		}
	}
}

// counts sums what every fault set, current and retired, injected.
func (h *hosts) counts() faults.Counts {
	var total faults.Counts
	add := func(c faults.Counts) {
		total.Errors += c.Errors
		total.Drops += c.Drops
		total.Delayed += c.Delayed
	}
	h.each(func(_ string, f *faults.Set) { add(f.Counts()) })
	h.mu.Lock()
	for _, c := range h.retired {
		add(c)
	}
	h.mu.Unlock()
	return total
}

// quiet removes every fault (the clean-up phase and the leak check run
// without them).
func (h *hosts) quiet() {
	h.each(func(_ string, f *faults.Set) { f.Reset() })
	h.mu.Lock()
	h.rate = 0
	h.mu.Unlock()
}

func (h *hosts) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.zfs != nil {
		h.zfs.Close()
	}
	if h.tn != nil {
		h.tn.Close()
	}
	if h.inf != nil {
		h.inf.Close()
	}
}
