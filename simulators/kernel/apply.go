package kernel

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

var ownerRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// Apply makes the kernel serve s for owner: objects of owner that s no
// longer has are removed, new ones are made, changed ones are changed in
// place where the kernel allows it. Applying the same State again changes
// nothing. On error the kernel may be partly changed; a later Apply
// finishes the job (also removing what the failed one left behind).
func (r *Reconciler) Apply(owner string, s State) error {
	if !ownerRE.MatchString(owner) {
		return fmt.Errorf("kernel: owner %q: want 1-100 letters, digits, '.', '_' or '-'", owner)
	}
	s = s.normalize()
	if err := s.validate(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	unlock, err := r.lockLedger()
	if err != nil {
		return err
	}
	defer unlock()
	l, err := r.loadLedger()
	if err != nil {
		return err
	}
	if err := conflicts(l, owner, s); err != nil {
		return err
	}
	p := r.newPass(l, owner, s)
	p.run()
	if len(p.errs) > 0 {
		l.Owners[owner] = withoutSecrets(union(p.old, s))
	} else {
		l.Owners[owner] = withoutSecrets(s)
	}
	if isEmpty(l.Owners[owner]) {
		delete(l.Owners, owner)
	}
	errs := p.errs
	if err := r.saveLedger(l); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("kernel: owner %s: %w", owner, errors.Join(errs...))
	}
	if p.cfs.changes > 0 || p.ran > 0 {
		r.log.Info("applied", "owner", owner, "configfs_changes", p.cfs.changes, "commands", p.ran)
	}
	return nil
}

// Close removes every object of owner.
func (r *Reconciler) Close(owner string) error { return r.Apply(owner, State{}) }

// Owners lists the owners that have objects in the kernel.
func (r *Reconciler) Owners() ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	unlock, err := r.lockLedger()
	if err != nil {
		return nil, err
	}
	defer unlock()
	l, err := r.loadLedger()
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(l.Owners))
	for o := range l.Owners {
		out = append(out, o)
	}
	sort.Strings(out)
	return out, nil
}

func isEmpty(s State) bool {
	return len(s.NVMe) == 0 && len(s.ISCSI) == 0 && len(s.NFS) == 0 && len(s.SMB) == 0
}

// conflicts refuses objects another owner has: one kernel object cannot
// follow two owners' wishes.
func conflicts(l *ledger, owner string, s State) error {
	var errs []string
	owners := make([]string, 0, len(l.Owners))
	for o := range l.Owners {
		if o != owner {
			owners = append(owners, o)
		}
	}
	sort.Strings(owners)
	mounts := map[string]string{} // mount point -> source, from s
	for _, e := range s.NFS {
		if e.Source != "" {
			mounts[e.Path] = e.Source
		}
	}
	for _, sh := range s.SMB {
		if sh.Source != "" {
			if src, ok := mounts[sh.Path]; ok && src != sh.Source {
				errs = append(errs, fmt.Sprintf("%s would be bind-mounted from both %s and %s", sh.Path, src, sh.Source))
			}
			mounts[sh.Path] = sh.Source
		}
	}
	for _, o := range owners {
		other := l.Owners[o]
		for _, x := range s.NVMe {
			if slices.ContainsFunc(other.NVMe, func(y Subsystem) bool { return y.NQN == x.NQN }) {
				errs = append(errs, fmt.Sprintf("nvme subsystem %s belongs to %s", x.NQN, o))
			}
		}
		for _, x := range s.ISCSI {
			if slices.ContainsFunc(other.ISCSI, func(y Target) bool { return y.IQN == x.IQN }) {
				errs = append(errs, fmt.Sprintf("iscsi target %s belongs to %s", x.IQN, o))
			}
		}
		for _, x := range s.NFS {
			if slices.ContainsFunc(other.NFS, func(y Export) bool { return y.Path == x.Path }) {
				errs = append(errs, fmt.Sprintf("nfs export %s belongs to %s", x.Path, o))
			}
		}
		for _, x := range s.SMB {
			if slices.ContainsFunc(other.SMB, func(y Share) bool { return strings.EqualFold(y.Name, x.Name) }) {
				errs = append(errs, fmt.Sprintf("smb share %s belongs to %s", x.Name, o))
			}
		}
		for mp, src := range neededMounts(other) {
			if mine, ok := mounts[mp]; ok && mine != src {
				errs = append(errs, fmt.Sprintf("%s is bind-mounted from %s for %s, not from %s", mp, src, o, mine))
			}
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("kernel: owner %s: %s", owner, strings.Join(errs, "; "))
	}
	return nil
}

// pass is one Apply's work.
type pass struct {
	r        *Reconciler
	l        *ledger
	cfs      *cfs
	owner    string
	old, new State
	all      []State // every owner's State, owner's new one included
	// devs maps each regular file or block device path to the device
	// the targets use; resized holds the loop devices refreshed now.
	devs    map[string]string
	resized map[string]bool
	// badMounts are mount points that could not be bound: their exports
	// and shares are left out.
	badMounts map[string]bool
	errs      []error
	ran       int // commands run
}

func (r *Reconciler) newPass(l *ledger, owner string, s State) *pass {
	p := &pass{r: r, l: l, cfs: &cfs{fs: r.o.FS}, owner: owner, old: l.Owners[owner], new: s,
		devs: map[string]string{}, resized: map[string]bool{}}
	for o, st := range l.Owners {
		if o != owner {
			p.all = append(p.all, st)
		}
	}
	p.all = append(p.all, s)
	return p
}

func (p *pass) fail(format string, a ...any) {
	p.errs = append(p.errs, fmt.Errorf(format, a...))
}

// run does the work in dependency order: devices before the targets that
// use them, targets removed before their devices go; mounts before the
// exports and shares that serve them, unmounted after.
func (p *pass) run() {
	p.attachLoops()
	p.nvmet()
	p.revalidate()
	p.lio()
	p.detachLoops()
	p.mountBinds()
	p.nfs()
	p.smb()
	p.unmountBinds()
}

// exec runs a command, counting it.
func (p *pass) exec(name string, args ...string) (string, error) {
	p.ran++
	return p.r.run(name, args...)
}

func (p *pass) execIn(stdin []byte, name string, args ...string) (string, error) {
	p.ran++
	return p.r.runIn(stdin, name, args...)
}
