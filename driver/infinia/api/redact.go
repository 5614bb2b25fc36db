package api

import (
	"log/slog"
	"regexp"
	"strings"
)

const redactedText = "<redacted>"

// jwtPattern matches any JSON Web Token (a base64url header starting with
// `{"`, a payload and a signature): the client never knows every token a
// server might quote back, so it removes anything shaped like one.
var jwtPattern = regexp.MustCompile(`eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`)

// redactor removes the password and tokens from any text the client
// produces from a server's answer or a library error.
type redactor struct{ password string }

func (r redactor) redact(s string) string {
	// A password of a character or two would blank out ordinary letters
	// all over a message; it is not a secret worth the name anyway.
	if len(r.password) >= 3 {
		s = strings.ReplaceAll(s, r.password, redactedText)
	}
	return jwtPattern.ReplaceAllString(s, redactedText)
}

// orDiscard lets callers pass a nil logger.
func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}
