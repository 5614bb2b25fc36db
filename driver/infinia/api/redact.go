package api

import (
	"errors"
	"log/slog"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
)

const redactedText = "<redacted>"

// jwtPattern matches any JSON Web Token (a base64url header starting with
// `{"`, a payload and a signature): the client never knows every token a
// server might quote back, so it removes anything shaped like one.
var jwtPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`) }) // compiled on first use

// redactor removes the password and tokens from any text the client
// produces from a server's answer or a library error, and, when the
// endpoints came from a secret (Config.SecretAPIs), their URLs and hosts:
// each becomes its label, "secret apis entry N".
type redactor struct {
	password string
	// endpoints matches every spelling of a secret endpoint (URL, host:port,
	// host); label maps a lower-cased match to its label.
	endpoints *regexp.Regexp
	label     map[string]string
}

// newRedactor builds the redactor for a validated config.
func newRedactor(st *settings) redactor {
	r := redactor{password: st.cfg.Password}
	if !st.cfg.SecretAPIs {
		return r
	}
	r.label = map[string]string{}
	add := func(s, label string) {
		s = strings.ToLower(strings.TrimSpace(s))
		// A name of a character or two would blank out ordinary letters.
		if len(s) < 3 {
			return
		}
		if _, ok := r.label[s]; !ok {
			r.label[s] = label
		}
	}
	for i, e := range st.endpoints {
		label := st.labels[i]
		add(st.cfg.APIs[i], label)
		add(e, label)
		u, err := url.Parse(e)
		if err != nil {
			continue
		}
		add(u.Scheme+"://"+u.Host, label)
		add(u.Host, label)
		port := u.Port()
		if port == "" {
			port = "443"
			if u.Scheme == "http" {
				port = "80"
			}
		}
		add(net.JoinHostPort(u.Hostname(), port), label)
		add(u.Hostname(), label)
		if strings.Contains(u.Hostname(), ":") {
			add("["+u.Hostname()+"]", label)
		}
	}
	r.endpoints = labelPattern(r.label)
	return r
}

// labelPattern matches any key of m, longest first, ignoring case.
func labelPattern(m map[string]string) *regexp.Regexp {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) > len(keys[j])
		}
		return keys[i] < keys[j]
	})
	for i, k := range keys {
		keys[i] = regexp.QuoteMeta(k)
	}
	return regexp.MustCompile(`(?i)` + strings.Join(keys, "|"))
}

func (r redactor) redact(s string) string {
	// A password of a character or two would blank out ordinary letters
	// all over a message; it is not a secret worth the name anyway.
	if len(r.password) >= 3 {
		s = strings.ReplaceAll(s, r.password, redactedText)
	}
	if r.endpoints != nil {
		s = r.endpoints.ReplaceAllStringFunc(s, func(m string) string { return r.label[strings.ToLower(m)] })
	}
	return jwtPattern().ReplaceAllString(s, redactedText)
}

// redactErr is redact for an error's text from a request to the endpoint
// labelled label: the address a dial failed on (a secret host's resolved
// IP among them) is replaced by the label too.
func (r redactor) redactErr(s string, err error, label string) string {
	if r.endpoints != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Addr != nil {
			a := op.Addr.String()
			s = strings.ReplaceAll(s, a, label)
			if h, _, herr := net.SplitHostPort(a); herr == nil && len(h) >= 3 {
				s = strings.ReplaceAll(s, h, label)
			}
		}
	}
	return r.redact(s)
}

// orDiscard lets callers pass a nil logger.
func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}
