package zfsgeneric

import (
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// assetFrom maps any input onto a name assetName accepts (a-z, 0-9, -_.:).
func assetFrom(s string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-_.:"
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 63; i++ {
		b.WriteByte(alphabet[int(s[i])%len(alphabet)])
	}
	if b.Len() == 0 {
		return "pvc-1"
	}
	return b.String()
}

const fuzzBasename = "iqn.2003-01.org.linux-iscsi.lab"

// FuzzConfigshellOutput checks how targetcli/nvmetcli output is read, for
// any asset name and any output:
//   - the confirmations targetcli prints ("Deleted Target <iqn>.",
//     "Deleted storage object <name>.") are never taken for "not there",
//     and never both "not there" and "looks like an error";
//   - its words for a missing object ("No such Target in configfs: ...",
//     "No storage object named ...") are "not there";
//   - a removal step (iscsiShare.Remove's removed) counts exactly when
//     its output holds the confirmation or a "not there": an error alone
//     never counts;
//   - cliFailed never repeats a sensitive value and its message is bounded;
//   - nothing panics.
func FuzzConfigshellOutput(f *testing.F) {
	for _, s := range []struct{ name, out, secret string }{
		{"pvc-1", "Deleted Target iqn.2003-01.org.linux-iscsi.lab:pvc-1.\nDeleted storage object pvc-1.\n", "s3cret-chap-pw"},
		{"pvc-1", "No such Target in configfs: /sys/kernel/config/target/iscsi/iqn.2003-01.org.linux-iscsi.lab:pvc-1\nNo storage object named pvc-1.\n", ""},
		{"pvc-1", "Ran out of input\n", "x"},
		{"error-db", "Traceback (most recent call last):\nconfigshell.shell.ExecutionError: injected fault\n", "injected"},
		{"unknown.exists", "", "red"},
		{"a", "Cannot delete Target: busy\nDeleted storage object a.\n", "Target"},
	} {
		f.Add(s.name, s.out, s.secret)
	}
	p := &platform{cfg: settings{driver: DriverISCSI}}

	f.Fuzz(func(t *testing.T, name, output, secret string) {
		asset := assetFrom(name)
		iqn := fuzzBasename + ":" + asset
		for _, conf := range []string{"Deleted Target " + iqn + ".", "Deleted storage object " + asset + "."} {
			o := zfs.Output{Stdout: conf + "\n"}
			if notThere(o) {
				t.Errorf("confirmation %q taken for \"not there\"", conf)
			}
			if notThere(o) && looksLikeError(o) {
				t.Errorf("confirmation %q is both \"not there\" and an error", conf)
			}
		}
		for _, gone := range []string{"No such Target in configfs: /sys/kernel/config/target/iscsi/" + iqn, "No storage object named " + asset + "."} {
			if !notThere(zfs.Output{Stdout: gone + "\n"}) {
				t.Errorf("%q not taken for \"not there\"", gone)
			}
		}

		// The removal steps' check (iscsiShare.Remove) on any output: an
		// error without the confirmation or a "not there" never counts.
		o := zfs.Output{Stdout: output}
		for _, done := range []string{"Deleted Target " + iqn + ".", "Deleted storage object " + asset + "."} {
			ok := removed(o, done)
			if ok != (strings.Contains(output, done) || notThere(o)) {
				t.Errorf("removed(%q, %q) = %v", output, done, ok)
			}
			if ok && looksLikeError(o) && !strings.Contains(output, done) && !notThere(o) {
				t.Errorf("an error counted as removal: %q", output)
			}
			if !removed(zfs.Output{Stdout: done + "\n"}, done) {
				t.Errorf("confirmation %q not counted as removal", done)
			}
		}

		// cliFailed: no sensitive value, bounded.
		what := "deleting iSCSI target " + iqn + " with targetcli"
		msg := cliFailed(p, what, zfs.Output{Stdout: output, Stderr: secret + output, Code: 1}, []string{secret}).Error()
		if limit := len(DriverISCSI) + len(what) + cliOutputMax + 100; len(msg) > limit {
			t.Errorf("message is %d bytes; the bound is %d", len(msg), limit)
		}
		_, tail, _ := strings.Cut(msg, "failed (exit 1): ")
		fixed := "<redacted>(output withheld: it holds a sensitive value)... (truncated)"
		if secret != "" && !strings.Contains(fixed, secret) && strings.Contains(tail, secret) {
			t.Errorf("message repeats the sensitive value %q: %q", secret, msg)
		}
	})
}
