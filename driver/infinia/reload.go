package infinia

import (
	"os"
	"time"

	"github.com/switchyard-csi/switchyard/driver/config"
)

// watch re-reads the config file when it changes (new file identity, as
// when Kubernetes swaps a Secret's symlink, or a new mtime or size) and
// swaps the accounts in one step. A file that does not parse or validate
// keeps the accounts in use and logs why.
func (d *Driver) watch(file string, every time.Duration) {
	defer close(d.stopped)
	last, _ := os.Stat(file)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-tick.C:
		}
		fi, err := os.Stat(file)
		if err != nil {
			d.log.Debug("config file not readable; keeping the accounts in use", "file", file, "error", err)
			continue
		}
		if last != nil && os.SameFile(last, fi) && fi.ModTime().Equal(last.ModTime()) && fi.Size() == last.Size() {
			continue
		}
		last = fi
		d.reload(file)
	}
}

// reload reads file and, when it is valid, replaces the accounts.
func (d *Driver) reload(file string) {
	tree, err := config.LoadMain(file)
	if err != nil {
		d.log.Error("config file changed but cannot be read; keeping the accounts in use", "file", file, "error", err)
		return
	}
	set, ps := parseAccounts(tree)
	if len(ps) > 0 {
		d.log.Error("config file changed but is not valid; keeping the accounts in use", "file", file, "error", config.Problems(ps).InFile(file).Error())
		return
	}
	old := d.accounts.Swap(set)
	d.clients.retain(set)
	for _, k := range old.keys {
		if _, ok := set.byKey[k]; !ok {
			d.log.Warn("account removed from the config; calls for its volumes will fail until it is restored", "account", k, "file", file)
		}
	}
	d.log.Info("config reloaded", "file", file, "accounts", len(set.keys))
}
