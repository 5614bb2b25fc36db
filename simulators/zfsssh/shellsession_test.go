package zfsssh

import (
	"fmt"
	"testing"
	"time"
)

// frameFor is driver/zfs's framing (ssh_shell_frame.go), written out.
func frameFor(p, m string) string {
	return "printf '%s\\n' " + m + "; sh -c '" + p + "' \"$1\" </dev/null; printf '\\n%s %d\\n' " + m + " \"$?\"; printf '\\n%s\\n' " + m + " >&2\n"
}

// A driver's shell session (driver/zfs/ssh_shell.go): "sh -s" on the
// exec's channel reads framed programs; each is one round trip and one
// Record.Program, its framing neither recorded nor delayed.
func TestShellSessionPrograms(t *testing.T) {
	const rtt = 40 * time.Millisecond
	e := startEnv(t, nil)
	e.srv.Faults().SetRoundTripLatency(rtt)
	e.srv.Faults().SetLatency("printf", time.Second) // the framing's printf must not pay it
	stdin := frameFor("echo $0; zfs list -H -o name tank", "M1") + frameFor("echo oops >&2; exit 3", "M2")
	start := time.Now()
	// carol's login shell is bash: the programs see it as $0, as over exec.
	r := runOn(t, e.client("carol"), `printf '%s\n' hello; printf '%s\n' hello >&2; sh -s "$0"`, stdin, false)
	took := time.Since(start)
	wantOut := "hello\nM1\nbash\ntank\n\nM1 0\nM2\n\nM2 3\n"
	wantErr := "hello\n\nM1\noops\n\nM2\n"
	if r.stdout != wantOut || r.stderr != wantErr || r.code != 0 || r.err != nil {
		t.Fatalf("session = %+v; want stdout %q, stderr %q", r, wantOut, wantErr)
	}
	// One round trip for the exec, one per program; no per-command
	// latency for the framing's printf.
	if took < 3*rtt || took > 3*rtt+time.Second {
		t.Errorf("took %s; want 3 round trips (%s)", took, 3*rtt)
	}
	var got []string
	for _, rec := range e.srv.Commands() {
		got = append(got, fmt.Sprintf("%d:%d:%s", rec.Program, rec.Depth, rec.Argv[0]))
	}
	// The exec starting the session is framing too (the login shell's
	// work for an exec): not recorded.
	want := "[1:0:echo 1:0:zfs 2:0:echo 2:0:exit]"
	if fmt.Sprint(got) != want {
		t.Errorf("records (program:depth:command) = %v; want %v", got, want)
	}
}

// Commands of several lines (a program's newlines inside the framing's
// quotes; a line ending in &&) run whole, each one program, between
// commands of one line.
func TestShellSessionMultiLinePrograms(t *testing.T) {
	e := startEnv(t, nil)
	stdin := frameFor("echo a\necho b", "M1") + "echo c &&\necho d\n" + frameFor("echo e", "M2")
	r := runOn(t, e.client("root"), `sh -s "$0"`, stdin, false)
	if want := "M1\na\nb\n\nM1 0\nc\nd\nM2\ne\n\nM2 0\n"; r.stdout != want || r.code != 0 {
		t.Fatalf("session = %+v; want stdout %q", r, want)
	}
	var got []string
	for _, rec := range e.srv.Commands() {
		if rec.Program > 0 { // not the exec that started the session
			got = append(got, fmt.Sprintf("%d:%s", rec.Program, rec.Argv[1]))
		}
	}
	// the unframed command is the session shell's own (not recorded),
	// but one program: the next is the third
	if want := "[1:a 1:b 3:e]"; fmt.Sprint(got) != want {
		t.Errorf("records (program:argument) = %v; want %v", got, want)
	}
}

// A program cut short inside its quotes (the channel closed mid-write)
// runs nothing: sh at EOF reports the open quote.
func TestShellSessionTruncatedProgram(t *testing.T) {
	e := startEnv(t, nil)
	full := frameFor("zfs create tank/x", "M1")
	cut := full[:len("printf '%s\\n' M1; sh -c 'zfs create tank/x")]
	r := runOn(t, e.client("root"), `sh -s "$0"`, cut, false)
	if e.host.has("tank/x") {
		t.Fatalf("a truncated program ran: %+v", r)
	}
	if r.code != 2 {
		t.Errorf("status %d; want sh's 2 for the open quote (%+v)", r.code, r)
	}
}
