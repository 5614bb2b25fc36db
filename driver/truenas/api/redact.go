package api

import (
	"encoding/base64"
	"log/slog"
	"sort"
	"strings"
)

const redactedText = "<redacted>"

// minRedactLen is the shortest credential the redactor looks for.
const minRedactLen = 4

// redactor removes the credentials from any text the client produces
// (error messages, server messages echoed into errors, log lines): the
// server or a library could quote them back at us.
type redactor struct{ secrets []string }

func newRedactor(cfg Config) *redactor {
	var vals []string
	add := func(v string) {
		// Shorter values would blank out ordinary words and letters all
		// over every message; they are not secrets worth the name anyway.
		if len(v) >= minRedactLen {
			vals = append(vals, v)
		}
	}
	add(cfg.Password)
	add(cfg.APIKey)
	// An API key is "<id>-<secret>": the secret alone is as sensitive.
	if _, secret, ok := strings.Cut(cfg.APIKey, "-"); ok && len(secret) >= 8 {
		add(secret)
	}
	if cfg.Username != "" && cfg.Password != "" {
		add(base64.StdEncoding.EncodeToString([]byte(cfg.Username + ":" + cfg.Password)))
	}
	// Longest first, so a secret that contains another is not left half-visible.
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	return &redactor{secrets: vals}
}

func (r *redactor) redact(s string) string {
	for _, v := range r.secrets {
		s = strings.ReplaceAll(s, v, redactedText)
	}
	return s
}

// redactError rewrites a server *Error's texts in place.
func (r *redactor) redactError(e *Error) *Error {
	e.Message = r.redact(e.Message)
	for i := range e.Fields {
		e.Fields[i].Attribute = r.redact(e.Fields[i].Attribute)
		e.Fields[i].Message = r.redact(e.Fields[i].Message)
	}
	return e
}

// orDiscard lets callers pass a nil logger.
func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}
