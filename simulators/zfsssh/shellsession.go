package zfsssh

import (
	"bufio"
	"io"
	"strings"
	"time"
)

// shellSessionStart ends the exec that starts a driver's shell session
// (driver/zfs's shellStartCommand: two hello lines, then this).
const shellSessionStart = `; sh -s "$0"`

// readScript is `sh -s` (or a plain `sh`) reading its script from stdin,
// the one loop for every such shell: it runs each complete command as
// soon as it has read it, as sh does reading a pipe, and at the end of
// input runs what it has (a command cut short inside its quotes is then a
// syntax error and runs nothing).
//
// session: stdin is the SSH channel of the exec that started this shell,
// so this is a driver's long-lived shell session (driver/zfs/ssh_shell.go),
// which writes one framed program at a time and reads the output back.
// Each complete command read is then one program and one round trip,
// charged and numbered like an exec (Faults.SetRoundTripLatency,
// Record.Program). The session shell's own commands (the framing: printf
// of the markers, the "sh -c" that runs the program) are neither recorded
// nor delayed nor counted by DropAfter: they stand for what the login
// shell does for an exec, so a program's Records read the same either way.
func readScript(p *proc, sh *shell, session bool) int {
	if session {
		sh.framing = true
		sh.depth = p.depth
	}
	in := bufio.NewReader(p.std.in)
	std := stdio{in: in, out: p.std.out, err: p.std.err}
	var pending strings.Builder
	var open byte // the quote pending leaves open
	for !sh.exited && p.ctx.Err() == nil {
		if session && pending.Len() == 0 {
			// Between programs nothing else runs: the shell's own send
			// (outbox.go), as its write to the pipe would be; also when
			// the next program is already read ahead.
			p.env.wait()
		}
		line, err := in.ReadString('\n')
		// A command of one line (the session's framing line) is the line
		// itself: pending only collects a command of several lines.
		text := line
		if pending.Len() > 0 {
			pending.WriteString(line)
			text = pending.String()
		}
		if err != nil {
			if text != "" {
				sh.run(p.ctx, text, std)
			}
			if err != io.EOF {
				return 1
			}
			break
		}
		if open != 0 && stillOpen(open, line) {
			continue
		}
		sc, more, q := parseScriptQuote(text)
		if more {
			open = q
			if pending.Len() == 0 {
				pending.WriteString(line)
			}
			continue
		}
		open = 0
		src := text
		pending.Reset()
		if session {
			if d := p.env.srv.faults.RoundTripDelay(); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-t.C:
				case <-p.ctx.Done():
					t.Stop()
					return 130
				}
			}
			p.env.program++
			p.env.line = strings.TrimSuffix(src, "\n")
		}
		sh.runScript(p.ctx, sc, std)
	}
	return sh.status
}
