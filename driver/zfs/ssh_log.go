package zfs

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"time"
)

// This file is shared by the SSH and local executors: both log every
// command the same way, with RunOptions.Sensitive values redacted.

const redactedText = "<redacted>"

// maxLoggedStderr keeps one chatty command from flooding the debug log.
const maxLoggedStderr = 512

// redactForLog replaces every sensitive value in s. Longer values go first
// so a secret that contains another is not left half-visible.
func redactForLog(s string, sensitive []string) string {
	if len(sensitive) == 0 {
		return s
	}
	vals := make([]string, 0, len(sensitive))
	for _, v := range sensitive {
		if v != "" {
			vals = append(vals, v)
		}
	}
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	for _, v := range vals {
		s = strings.ReplaceAll(s, v, redactedText)
	}
	return s
}

// logCommandRun records one finished command at debug level; log already
// names the executor and its target.
func logCommandRun(log *slog.Logger, line string, opts RunOptions, took time.Duration, out Output, err error) {
	if !log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	// Redact before truncating: a cut could split a secret past recognition.
	stderr := redactForLog(out.Stderr, opts.Sensitive)
	if len(stderr) > maxLoggedStderr {
		stderr = stderr[:maxLoggedStderr] + "..."
	}
	attrs := []any{
		"command", redactForLog(line, opts.Sensitive),
		"duration", took,
		"code", out.Code,
	}
	if opts.PTY {
		attrs = append(attrs, "pty", true)
	}
	if stderr != "" {
		attrs = append(attrs, "stderr", stderr)
	}
	if err != nil {
		attrs = append(attrs, "error", redactForLog(err.Error(), opts.Sensitive))
	}
	log.Debug("command finished", attrs...)
}

// orDiscard lets callers pass a nil logger.
func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}
