package zfsssh

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// chanEvent is one thing a session did to its channel: data on a stream
// (one Write: at least one packet), EOF, a request, the close.
type chanEvent struct {
	kind string // "out", "err", "eof", "req", "close"
	data string // the bytes, or the request's type
	at   time.Time
}

// recChannel is an ssh.Channel that records what the session sends, in
// order, and serves stdin from a reader.
type recChannel struct {
	in     io.Reader
	mu     sync.Mutex
	events []chanEvent
	closed chan struct{}
	once   sync.Once
}

func newRecChannel(in io.Reader) *recChannel {
	return &recChannel{in: in, closed: make(chan struct{})}
}

func (c *recChannel) add(kind, data string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, chanEvent{kind: kind, data: data, at: time.Now()})
}

func (c *recChannel) snapshot() []chanEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]chanEvent(nil), c.events...)
}

func (c *recChannel) Read(p []byte) (int, error)  { return c.in.Read(p) }
func (c *recChannel) Write(p []byte) (int, error) { c.add("out", string(p)); return len(p), nil }
func (c *recChannel) CloseWrite() error           { c.add("eof", ""); return nil }
func (c *recChannel) Close() error {
	c.once.Do(func() { c.add("close", ""); close(c.closed) })
	return nil
}
func (c *recChannel) SendRequest(name string, _ bool, payload []byte) (bool, error) {
	data := name
	if name == "exit-status" {
		var m struct{ Status uint32 }
		_ = ssh.Unmarshal(payload, &m)
		data = fmt.Sprintf("%s %d", name, m.Status)
	}
	c.add("req", data)
	return true, nil
}
func (c *recChannel) Stderr() io.ReadWriter { return recStderr{c} }

type recStderr struct{ c *recChannel }

func (e recStderr) Read([]byte) (int, error)    { return 0, io.EOF }
func (e recStderr) Write(p []byte) (int, error) { e.c.add("err", string(p)); return len(p), nil }

// execOn runs command as root in a session on ch, as serveSession runs an
// exec request, and returns once the session closed its channel.
func execOn(t *testing.T, ch *recChannel, command string) {
	t.Helper()
	execOnEnv(t, startEnv(t, nil), ch, command)
}

func execOnEnv(t *testing.T, e *testEnv, ch *recChannel, command string) {
	t.Helper()
	c := &sshConn{srv: e.srv, id: 1, user: e.srv.users["root"]}
	c.ctx, c.cancel = e.srv.ctx, func() {}
	c.sessions = 1
	reqs := make(chan *ssh.Request, 1)
	reqs <- &ssh.Request{Type: "exec", Payload: ssh.Marshal(struct{ Command string }{command})}
	close(reqs)
	c.wg.Add(1)
	go c.serveSession(1, ch, reqs)
	select {
	case <-ch.closed:
	case <-time.After(10 * time.Second):
		t.Fatalf("%q: the session did not end; events %+v", command, ch.snapshot())
	}
	c.wg.Wait()
}

func describe(evs []chanEvent) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%s(%q) ", e.kind, e.data)
	}
	return b.String()
}

// A program's small writes leave in one write per stretch of a stream, in
// the order written, then EOF, then the exit status, then the close: what
// sshd sends for a program that wrote them all before it could read its
// pipes.
func TestOutputLeavesInRunsThenStatus(t *testing.T) {
	ch := newRecChannel(strings.NewReader(""))
	execOn(t, ch, "printf a; printf b; printf c >&2; printf d >&2; printf e; exit 3")
	want := `out("ab") err("cd") out("e") eof("") req("exit-status 3") close("") `
	if got := describe(ch.snapshot()); got != want {
		t.Fatalf("sent %s\nwant %s", got, want)
	}
}

// A driver's program in its shell session (the framing's printfs, the
// program's output, the end markers on both streams) is two writes, not
// one per printf.
func TestShellSessionProgramIsOneWritePerStream(t *testing.T) {
	pr, pw := io.Pipe()
	ch := newRecChannel(pr)
	done := make(chan struct{})
	go func() {
		defer close(done)
		execOn(t, ch, `printf '%s\n' hi; printf '%s\n' hi >&2; sh -s "$0" x`)
	}()
	waitFor(t, ch, func(evs []chanEvent) bool { return len(evs) >= 2 })
	before := len(ch.snapshot())
	prog := `printf '%s\n' M; sh -c 'printf one; printf two; printf three' "$1" </dev/null; printf '\n%s %d\n' M "$?"; printf '\n%s\n' M >&2` + "\n"
	if _, err := pw.Write([]byte(prog)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ch, func(evs []chanEvent) bool { return len(evs) >= before+2 })
	pw.Close()
	<-done
	evs := ch.snapshot()
	if got, want := describe(evs[before:before+2]), `out("M\nonetwothree\nM 0\n") err("\nM\n") `; got != want {
		t.Fatalf("the program left as %s\nwant %s", got, want)
	}
	if got := describe(evs[:2]); got != `out("hi\n") err("hi\n") ` {
		t.Fatalf("the hello lines left as %s", got)
	}
}

func waitFor(t *testing.T, ch *recChannel, ok func([]chanEvent) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(ch.snapshot()) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out; sent %s", describe(ch.snapshot()))
		}
		time.Sleep(time.Millisecond)
	}
}

// Without the timer, what a command wrote still leaves when it waits: for
// its input (the client answers only what it saw) and in a sleep (the
// output of a long-running command streams).
func TestOutputLeavesWhenTheCommandWaits(t *testing.T) {
	defer func(d time.Duration) { outboxDelay = d }(outboxDelay)
	outboxDelay = time.Hour
	t.Run("input", func(t *testing.T) {
		pr, pw := io.Pipe()
		ch := newRecChannel(pr)
		done := make(chan struct{})
		go func() { defer close(done); execOn(t, ch, "printf 'ready? '; cat") }()
		// The client answers only once it saw the question.
		waitFor(t, ch, func(evs []chanEvent) bool { return len(evs) > 0 })
		pw.Write([]byte("yes\n"))
		waitFor(t, ch, func(evs []chanEvent) bool { return len(evs) > 1 })
		pw.Close()
		<-done
		if got, want := describe(ch.snapshot()), `out("ready? ") out("yes\n") eof("") req("exit-status 0") close("") `; got != want {
			t.Fatalf("sent %s\nwant %s", got, want)
		}
	})
	t.Run("sleep", func(t *testing.T) {
		ch := newRecChannel(strings.NewReader(""))
		execOn(t, ch, "printf first; sleep 0.3; printf second")
		evs := ch.snapshot()
		if got, want := describe(evs), `out("first") out("second") eof("") req("exit-status 0") close("") `; got != want {
			t.Fatalf("sent %s\nwant %s", got, want)
		}
		if gap := evs[1].at.Sub(evs[0].at); gap < 250*time.Millisecond {
			t.Fatalf("the first line left %v before the second; want it before the sleep", gap)
		}
	})
}

// The timer sends what waits for a command busy with something else.
func TestOutboxTimerSends(t *testing.T) {
	ch := newRecChannel(nil)
	o := newOutbox(ch, ch.Stderr())
	o.delay = 5 * time.Millisecond
	io.WriteString(o.Stdout(), "a")
	io.WriteString(o.Stderr(), "b")
	waitFor(t, ch, func(evs []chanEvent) bool { return len(evs) == 2 })
	if got := describe(ch.snapshot()); got != `out("a") err("b") ` {
		t.Fatalf("sent %s", got)
	}
	io.WriteString(o.Stdout(), "c")
	waitFor(t, ch, func(evs []chanEvent) bool { return len(evs) == 3 })
	o.Close()
}

// Output larger than a pipe read leaves in sshd-sized pieces, every byte
// in order.
func TestOutboxChunks(t *testing.T) {
	ch := newRecChannel(nil)
	o := newOutbox(ch, ch.Stderr())
	o.delay = time.Hour
	var want strings.Builder
	for i := range 100 {
		s := strings.Repeat(string(rune('a'+i%26)), 1000)
		want.WriteString(s)
		io.WriteString(o.Stdout(), s)
	}
	big := strings.Repeat("Z", 3*outboxChunk)
	want.WriteString(big)
	io.WriteString(o.Stdout(), big)
	o.Close()
	var got strings.Builder
	evs := ch.snapshot()
	for _, e := range evs {
		if len(e.data) > 3*outboxChunk || (len(e.data) > outboxChunk && e.data != big) {
			t.Fatalf("a write of %d bytes", len(e.data))
		}
		got.WriteString(e.data)
	}
	if got.String() != want.String() {
		t.Fatal("the bytes changed on the way")
	}
	if len(evs) < 100000/outboxChunk || len(evs) > 100000/outboxChunk+3 {
		t.Fatalf("%d writes for 100 KB in 1 KB pieces and one large one", len(evs))
	}
}

// A channel that refuses a write fails the writes after it, as a broken
// pipe does, and after Close writes go straight through.
func TestOutboxErrorsAndClose(t *testing.T) {
	w := &failWriter{}
	o := newOutbox(w, w)
	o.delay = time.Hour
	if _, err := io.WriteString(o.Stdout(), "x"); err != nil {
		t.Fatal(err)
	}
	if err := o.Flush(); err == nil {
		t.Fatal("the failed send was not reported")
	}
	if _, err := io.WriteString(o.Stdout(), "y"); err == nil {
		t.Fatal("a write after the failed send succeeded")
	}
	ch := newRecChannel(nil)
	o = newOutbox(ch, ch.Stderr())
	o.Close()
	io.WriteString(o.Stderr(), "late")
	if got := describe(ch.snapshot()); got != `err("late") ` {
		t.Fatalf("after Close: %s", got)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.EOF }

// A command's read of its input does not wait for its output to leave: a
// send stalled on the client's window must not stop the input, which a
// client that writes all its input before it reads may be blocked on.
func TestInputIsReadWhileOutputIsStalled(t *testing.T) {
	stall := make(chan struct{})
	defer close(stall)
	w := stalledWriter(stall)
	o := newOutbox(w, w)
	o.delay = time.Millisecond
	io.WriteString(o.Stdout(), "output the client does not read yet")
	time.Sleep(20 * time.Millisecond) // the timer's send is stalled now, holding the outbox
	in := &inReader{r: strings.NewReader("input"), o: o}
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(in)
		got <- string(b)
	}()
	select {
	case s := <-got:
		if s != "input" {
			t.Fatalf("read %q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading the input waited for the stalled output")
	}
}

type stalledWriter chan struct{}

func (s stalledWriter) Write(p []byte) (int, error) { <-s; return len(p), nil }

// What the commands before a dropped one printed reaches the client before
// the connection drops: sshd sent it while they ran.
func TestOutputBeforeADropLeaves(t *testing.T) {
	e := startEnv(t, nil)
	defer func(d time.Duration) { outboxDelay = d }(outboxDelay)
	outboxDelay = time.Hour // only the drop can send it
	e.srv.Faults().DropAfter(2)
	r := runOn(t, e.client("root"), "echo early; zfs create tank/a; echo late", "", false)
	if r.err == nil || r.stdout != "early\n" {
		t.Fatalf("run = %+v, want the first line, then a lost connection", r)
	}
}

// A driver's shell session that has the next program already (read
// ahead) sends the last one's output before it starts on the next: here
// the next one's round trip would otherwise hold it.
func TestSessionSendsBeforeTheNextProgram(t *testing.T) {
	defer func(d time.Duration) { outboxDelay = d }(outboxDelay)
	outboxDelay = time.Hour
	e := startEnv(t, nil)
	e.srv.Faults().SetRoundTripLatency(300 * time.Millisecond)
	ch := newRecChannel(strings.NewReader("printf one\nprintf two\n"))
	execOnEnv(t, e, ch, `printf '%s\n' hi; sh -s "$0" x`)
	evs := ch.snapshot()
	if got, want := describe(evs), `out("hi\n") out("one") out("two") eof("") req("exit-status 0") close("") `; got != want {
		t.Fatalf("sent %s\nwant %s", got, want)
	}
	if gap := evs[2].at.Sub(evs[1].at); gap < 250*time.Millisecond {
		t.Fatalf("the first program's output left %v before the second's; want it before the second's round trip", gap)
	}
}
