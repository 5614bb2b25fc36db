// Package transfer copies a volume's data stream from one backend to
// another through the controller: a Source writes the stream (zfs send on
// one host), a Sink consumes it (zfs receive on another), and Copy joins
// them with a pipe, so the controller holds one buffer at a time, never the
// stream. A connection that drops mid-stream is resumed where the sink
// says it stopped (zfs receive -s keeps a resume token), and a copy that
// cannot finish removes its partial target.
package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Source writes the stream to w. A non-empty resume token asks for the rest
// of a stream a Sink stopped in (zfs send -t).
type Source interface {
	Send(ctx context.Context, w io.Writer, resume string) error
}

// Sink receives a stream.
type Sink interface {
	// Receive consumes r until the stream ends.
	Receive(ctx context.Context, r io.Reader) error
	// ResumeToken is where an interrupted Receive can continue; "" when it
	// cannot (the next attempt starts over).
	ResumeToken(ctx context.Context) (string, error)
	// Abort removes whatever an unfinished Receive left.
	Abort(ctx context.Context) error
}

// Completer is an optional Sink interface: a sink whose target an
// earlier call already received completely is not streamed into again.
type Completer interface {
	Complete() bool
}

// Options tune Copy.
type Options struct {
	// Attempts is how many times a stream is (re)started; default 3.
	Attempts int
	// Total is the expected stream size for percentages (0: unknown).
	Total int64
	// ProgressEvery is how often progress is logged; default 10s.
	ProgressEvery time.Duration
	// Progress, when set, is told the bytes copied so far (a metrics hook).
	Progress func(bytes int64)
	Log      *slog.Logger
	// What names the copy in logs ("nas-a/pvc-1 -> nas-b/pvc-2").
	What string
}

// Retryable reports whether a stream error may be cured by resuming: the
// connection dropped or the host could not be reached (UNAVAILABLE).
func Retryable(err error) bool {
	return status.Code(err) == codes.Unavailable || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.ErrClosedPipe)
}

// Counter tracks a running copy for progress reports.
type Counter struct {
	bytes atomic.Int64
	total atomic.Int64
}

// Bytes copied so far (over every attempt, resumed bytes once).
func (c *Counter) Bytes() int64 { return c.bytes.Load() }

// Percent is the share of Total copied, 0 when Total is unknown.
func (c *Counter) Percent() int {
	total := c.total.Load()
	if total <= 0 {
		return 0
	}
	return int(min(100, c.bytes.Load()*100/total))
}

// Copy streams src into dst, resuming after retryable errors, and removes
// the partial target (dst.Abort) when it gives up. c may be nil.
func Copy(ctx context.Context, src Source, dst Sink, opts Options, c *Counter) error {
	if opts.Attempts <= 0 {
		opts.Attempts = 3
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = 10 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if c == nil {
		c = &Counter{}
	}
	c.total.Store(opts.Total)
	if k, ok := dst.(Completer); ok && k.Complete() {
		opts.Log.Info("copy target already complete; nothing to stream", "copy", opts.What)
		c.bytes.Store(opts.Total)
		return nil
	}
	stop := make(chan struct{})
	defer close(stop)
	go report(c, opts, stop)

	// A target left half-received by an earlier process resumes too.
	token, err := dst.ResumeToken(ctx)
	if err != nil {
		return giveUp(ctx, dst, opts, fmt.Errorf("reading the target's resume token: %w", err))
	}
	var last error
	for attempt := 1; attempt <= opts.Attempts; attempt++ {
		if token != "" {
			opts.Log.Info("resuming copy", "copy", opts.What, "attempt", attempt, "bytes", c.Bytes())
		}
		last = once(ctx, src, dst, token, c, opts)
		if last == nil {
			opts.Log.Info("copy finished", "copy", opts.What, "bytes", c.Bytes(), "attempts", attempt)
			return nil
		}
		if ctx.Err() != nil || !Retryable(last) {
			return giveUp(ctx, dst, opts, last)
		}
		opts.Log.Warn("copy interrupted; resuming", "copy", opts.What, "attempt", attempt, "error", last)
		if token, err = dst.ResumeToken(ctx); err != nil {
			return giveUp(ctx, dst, opts, fmt.Errorf("%w; then reading the resume token: %w", last, err))
		}
		if token == "" {
			// Nothing to resume from: start over from a clean target.
			if err := dst.Abort(ctx); err != nil {
				return giveUp(ctx, dst, opts, fmt.Errorf("%w; then removing the partial target: %w", last, err))
			}
			c.bytes.Store(0)
		}
	}
	return giveUp(ctx, dst, opts, fmt.Errorf("gave up after %d attempts: %w", opts.Attempts, last))
}

// once runs one stream: the source writes into a pipe the sink reads, so
// at most one write is in flight in the controller.
func once(ctx context.Context, src Source, dst Sink, token string, c *Counter, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	sent := make(chan error, 1)
	go func() {
		err := src.Send(ctx, &counting{w: pw, c: c, hook: opts.Progress}, token)
		pw.CloseWithError(orEOF(err))
		sent <- err
	}()
	recvErr := dst.Receive(ctx, pr)
	pr.CloseWithError(orEOF(recvErr)) // a sink that stopped early must not leave the source blocked
	if recvErr != nil {
		cancel()
		if sendErr := <-sent; sendErr != nil && !errors.Is(sendErr, io.ErrClosedPipe) && Retryable(sendErr) && !Retryable(recvErr) {
			// The sink saw a short stream because the source's connection
			// dropped: resuming can cure that.
			return sendErr
		}
		return recvErr
	}
	if sendErr := <-sent; sendErr != nil {
		return fmt.Errorf("sending: %w", sendErr)
	}
	return nil
}

func orEOF(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}

// giveUp removes the partial target and returns err. The cleanup uses a
// fresh context: the caller's may be the reason for giving up.
func giveUp(ctx context.Context, dst Sink, opts Options, err error) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if aerr := dst.Abort(cctx); aerr != nil {
		opts.Log.Error("could not remove a partial copy target", "copy", opts.What, "error", aerr)
		return fmt.Errorf("%w (removing the partial target failed too: %v)", err, aerr)
	}
	opts.Log.Warn("copy failed; partial target removed", "copy", opts.What, "error", err)
	return err
}

func report(c *Counter, opts Options, stop <-chan struct{}) {
	t := time.NewTicker(opts.ProgressEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			opts.Log.Info("copy in progress", "copy", opts.What, "bytes", c.Bytes(), "total", c.total.Load(), "percent", c.Percent())
		}
	}
}

type counting struct {
	w    io.Writer
	c    *Counter
	hook func(int64)
}

func (w *counting) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	total := w.c.bytes.Add(int64(n))
	if w.hook != nil {
		w.hook(total)
	}
	return n, err
}
