package zfs

import (
	"io"
	"sync"
)

// How a shell session's two streams are read (ssh_shell.go). A reader
// goroutine per stream lives as long as the session and appends what it
// reads to the session's buffers; while a program runs it also reads the
// program's frame (ssh_shell_frame.go) itself and wakes the caller
// waiting for the program once: when both end markers are in, when the
// output is out of step, or when a stream ends. The readers used to hand
// every chunk to the waiting caller over a channel, which cost one
// goroutine wake-up per chunk (two to four per program); on these
// machines each wake-up of a parked goroutine is a futex call and a
// thread switch, tens of µs, which made them a good part of the driver's
// CPU per call while it mostly waits (docs/performance.md, issue 16).

// shellIdleKeep bounds what a session keeps of what arrives while no
// program runs: a fresh session's login noise and hellos (more than
// maxLoginNoise is refused anyway), or a used session's stray output, of
// which only the fact counts.
const shellIdleKeep = 2 * maxLoginNoise

// shellReads is what a session's readers have read, under mu.
type shellReads struct {
	mu sync.Mutex
	// prog is the program being read; nil while the session is idle.
	prog *shellProgram
	// out and errs hold each stream's bytes since the program began (what
	// arrived while idle included); reset when it ends.
	out, errs []byte
	// outEnded, errEnded: the stream ended (EOF or the connection's loss).
	outEnded, errEnded bool
	// used: a program ran to its end on the session, so anything arriving
	// while idle is out of step.
	used bool
	// stray: bytes arrived where no program's output may be (while idle,
	// or after the program's end markers): the session must not take
	// another program.
	stray bool
	// wake carries the readers' news to the caller waiting for a program
	// (one slot: news coalesces; the caller reads the state under mu).
	wake chan struct{}
}

// shellProgram is what the streams have shown of one program so far.
type shellProgram struct {
	m     string // its marker
	hello bool   // the session's first program: the hellos come first
	// What the frame readers found (stdoutFrame, stderrFrame).
	stdout, stderr string
	code           int
	begun          bool
	ost, est       frameState
}

// complete: nothing either stream brings can change the program's answer.
func (p *shellProgram) complete() bool {
	return p.ost == frameDesync || p.est == frameDesync || (p.ost == frameDone && p.est == frameDone)
}

func newShellReads() *shellReads {
	return &shellReads{wake: make(chan struct{}, 1)}
}

// pump reads one stream until it ends.
func (rd *shellReads) pump(r io.Reader, stderr bool) {
	buf := make([]byte, shellChunkBuf)
	for {
		n, err := r.Read(buf)
		rd.received(stderr, buf[:n], err != nil)
		if err != nil {
			return
		}
	}
}

// received takes a stream's bytes (and its end) and wakes the waiting
// caller when that decides the program's answer.
func (rd *shellReads) received(stderr bool, b []byte, ended bool) {
	rd.mu.Lock()
	p := rd.prog
	buf := &rd.out
	if stderr {
		buf = &rd.errs
	}
	if len(b) > 0 {
		switch {
		case p == nil:
			rd.stray = rd.stray || rd.used
			if len(*buf)+len(b) <= shellIdleKeep {
				*buf = append(*buf, b...)
			}
		case p.complete():
			rd.stray = true
			*buf = append(*buf, b...)
		default:
			*buf = append(*buf, b...)
			p.read(stderr, *buf)
		}
	}
	if ended {
		if stderr {
			rd.errEnded = true
		} else {
			rd.outEnded = true
		}
	}
	news := p != nil && (ended || p.complete())
	rd.mu.Unlock()
	if news {
		rd.signal()
	}
}

func (rd *shellReads) signal() {
	select {
	case rd.wake <- struct{}{}:
	default:
	}
}

// read reads one stream's frame from all its bytes so far.
func (p *shellProgram) read(stderr bool, buf []byte) {
	if stderr {
		p.stderr, p.est = stderrFrame(buf, p.m, p.hello)
	} else {
		p.stdout, p.code, p.begun, p.ost = stdoutFrame(buf, p.m, p.hello)
	}
}

// begin makes p the program the readers read; what arrived before it
// (a fresh session's hellos, or stray bytes that put it out of step) is
// read as the start of its streams.
func (rd *shellReads) begin(p *shellProgram) {
	select {
	case <-rd.wake: // news of no program
	default:
	}
	rd.mu.Lock()
	rd.prog = p
	if len(rd.out) > 0 {
		p.read(false, rd.out)
	}
	if len(rd.errs) > 0 {
		p.read(true, rd.errs)
	}
	rd.mu.Unlock()
}

// shellReadState is a copy of the readers' state for the waiting caller.
type shellReadState struct {
	prog               shellProgram
	outEnded, errEnded bool
}

func (rd *shellReads) state() shellReadState {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return shellReadState{prog: *rd.prog, outEnded: rd.outEnded, errEnded: rd.errEnded}
}

// bytes copies what each stream has read so far.
func (rd *shellReads) bytes() (ob, eb []byte) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return append([]byte(nil), rd.out...), append([]byte(nil), rd.errs...)
}

// bothEnded: neither stream can bring more.
func (rd *shellReads) bothEnded() bool {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return rd.outEnded && rd.errEnded
}

// finish ends the program in step: the session is idle again, and what
// arrives from now on is stray. A program's buffers are kept for the next
// one unless a large output grew them.
func (rd *shellReads) finish() {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	rd.prog, rd.used = nil, true
	rd.out, rd.errs = reuse(rd.out), reuse(rd.errs)
}

func reuse(b []byte) []byte {
	if cap(b) > 4*shellChunkBuf {
		return nil
	}
	return b[:0]
}

// idleInStep: nothing arrived while the session was idle and both its
// streams are open.
func (rd *shellReads) idleInStep() bool {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return !rd.stray && !rd.outEnded && !rd.errEnded && len(rd.out) == 0 && len(rd.errs) == 0
}
