package zfsssh

import (
	"io"
	"sync"
	"time"
)

// outbox is a session's output on its way into the channel, sent the way
// sshd sends a program's output. sshd does not see the program's writes:
// it reads the program's stdout and stderr pipes when they are readable
// and sends what it read, at most outboxChunk bytes, as one channel data
// packet. A program (a shell running printf after printf) that writes
// many small pieces without waiting in between therefore reaches the
// client in a few packets, not one per write. Sending one packet per
// write cost the simulator an encryption and a write(2) each: the framing
// of a driver's shell session alone made three of them per program
// (issue 16).
//
// So writes collect here and go out, in the order they were made (a run
// of stdout, then a run of stderr, ...; the bytes and their order on each
// stream and across them are those written), when
//   - the command waits: it reads its input (inReader), sleeps, or is
//     held by an injected latency (sessionEnv.wait); sshd would have
//     drained the pipes while it waited;
//   - the command ends (finish sends it all before EOF and the exit
//     status);
//   - outboxChunk bytes are waiting (sshd's read from a pipe);
//   - outboxDelay has passed since the first byte waiting: the backstop
//     for a command that computes or blocks on something else between
//     its writes, so its output still streams.
//
// A write that the channel refuses (the client closed it, the connection
// is gone) fails every later write, as a broken pipe does.
type outbox struct {
	stdout, stderr io.Writer // the channel's two streams
	delay          time.Duration

	mu     sync.Mutex
	buf    []byte
	runs   []outRun
	timer  *time.Timer
	armed  bool // timer is set for what is in buf
	err    error
	closed bool // finished: writes go straight through
}

// outRun is one stream's stretch of buf, up to end.
type outRun struct {
	stderr bool
	end    int
}

// outboxChunk is what sshd reads from a pipe at a time (OpenSSH's
// CHAN_RBUF, 16 KiB).
const outboxChunk = 16 << 10

// outboxDelay bounds how long output waits for more. Long against a
// program's burst of writes (tens of microseconds), short for a person or
// a log watching a stream. A variable for the tests, which take the
// backstop away to see the other flushes.
var outboxDelay = 2 * time.Millisecond

func newOutbox(stdout, stderr io.Writer) *outbox {
	return &outbox{stdout: stdout, stderr: stderr, delay: outboxDelay}
}

// Stdout and Stderr are the writers a session's command gets.
func (o *outbox) Stdout() io.Writer { return outStream{o, false} }
func (o *outbox) Stderr() io.Writer { return outStream{o, true} }

type outStream struct {
	o      *outbox
	stderr bool
}

func (s outStream) Write(p []byte) (int, error) { return s.o.write(s.stderr, p) }

func (o *outbox) write(stderr bool, p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return 0, o.err
	}
	if o.closed {
		return o.send(stderr, p)
	}
	if len(o.buf)+len(p) > outboxChunk {
		if err := o.flushLocked(); err != nil {
			return 0, err
		}
		if len(p) >= outboxChunk {
			// As much as sshd reads at once: no point copying it.
			n, err := o.send(stderr, p)
			if err != nil {
				o.err = err
			}
			return n, err
		}
	}
	o.buf = append(o.buf, p...)
	if n := len(o.runs); n > 0 && o.runs[n-1].stderr == stderr {
		o.runs[n-1].end = len(o.buf)
	} else {
		o.runs = append(o.runs, outRun{stderr: stderr, end: len(o.buf)})
	}
	if !o.armed && len(o.buf) > 0 {
		o.armed = true
		if o.timer == nil {
			o.timer = time.AfterFunc(o.delay, o.expire)
		} else {
			o.timer.Reset(o.delay)
		}
	}
	return len(p), nil
}

// expire is the timer's flush.
func (o *outbox) expire() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.armed = false
	_ = o.flushLocked()
}

// Flush sends what is waiting.
func (o *outbox) Flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.flushLocked()
}

// Close sends what is waiting; later writes (a command the session left
// running) go to the channel as they come.
func (o *outbox) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	err := o.flushLocked()
	o.closed = true
	return err
}

func (o *outbox) flushLocked() error {
	if o.armed {
		o.timer.Stop()
		o.armed = false
	}
	if len(o.buf) == 0 || o.err != nil {
		return o.err
	}
	start := 0
	for _, r := range o.runs {
		if _, err := o.send(r.stderr, o.buf[start:r.end]); err != nil {
			o.err = err
			break
		}
		start = r.end
	}
	o.buf, o.runs = o.buf[:0], o.runs[:0]
	return o.err
}

func (o *outbox) send(stderr bool, p []byte) (int, error) {
	if stderr {
		return o.stderr.Write(p)
	}
	return o.stdout.Write(p)
}

// kick has what waits sent now, by the timer's goroutine rather than the
// caller's. It never blocks: when another goroutine holds the outbox (a
// write, or a send stalled on the client's window), the timer already set
// for what waits sends it.
func (o *outbox) kick() {
	if !o.mu.TryLock() {
		return
	}
	defer o.mu.Unlock()
	if o.armed {
		o.timer.Reset(0)
	}
}

// inReader is a session's input: a command about to read it is about to
// wait for the client, so what it wrote goes out now (a shell that printed
// a prompt or a program's answer and now reads the next line). The reader
// does not send it itself: a send can stall until the client reads (its
// window), and a client that writes all its input before it reads any
// output must find the input read meanwhile, as sshd keeps reading it
// into the program's stdin pipe while the program's output waits.
type inReader struct {
	r io.Reader
	o *outbox
}

func (in *inReader) Read(p []byte) (int, error) {
	in.o.kick()
	return in.r.Read(p)
}
