package truenas

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// authStore holds the accounts and API keys. Revocations and reissued keys
// persist in a JSON file, so a key revoked for use over plain text stays
// revoked across restarts of the simulator until ReissueAPIKey.
type authStore struct {
	mu       sync.Mutex
	file     string
	users    map[string]string
	keys     map[string]*apiKey // by name
	revoked  map[string]bool    // sha256 of revoked keys
	reissued map[string]string  // name -> key that replaced the configured one
}

type apiKey struct {
	name string
	id   int
	key  string
}

// authState is the persisted part of authStore.
type authState struct {
	Revoked  []string          `json:"revoked"`
	Reissued map[string]string `json:"reissued"`
}

func newAuthStore(file string, users, keys map[string]string) (*authStore, error) {
	a := &authStore{file: file, users: map[string]string{}, keys: map[string]*apiKey{}, revoked: map[string]bool{}, reissued: map[string]string{}}
	for u, p := range users {
		a.users[u] = p
	}
	var st authState
	switch data, err := os.ReadFile(file); {
	case err == nil:
		if err := json.Unmarshal(data, &st); err != nil {
			return nil, fmt.Errorf("truenas: %s: %w", file, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("truenas: %w", err)
	}
	for _, h := range st.Revoked {
		a.revoked[h] = true
	}
	for n, k := range st.Reissued {
		a.reissued[n] = k
	}
	ids := map[int]string{}
	for name, key := range keys {
		if r, ok := a.reissued[name]; ok {
			key = r
		}
		id, err := parseAPIKey(key)
		if err != nil {
			return nil, fmt.Errorf("truenas: Options.APIKeys[%q]: %w", name, err)
		}
		if other, dup := ids[id]; dup {
			return nil, fmt.Errorf("truenas: Options.APIKeys: %q and %q both have id %d", name, other, id)
		}
		ids[id] = name
		a.keys[name] = &apiKey{name: name, id: id, key: key}
	}
	return a, nil
}

// parseAPIKey checks the "<id>-<64 alphanumerics>" shape and returns the id.
func parseAPIKey(key string) (int, error) {
	idText, secret, ok := strings.Cut(key, "-")
	id, err := strconv.Atoi(idText)
	if !ok || err != nil || id < 1 {
		return 0, errors.New(`an API key is "<id>-<64 letters and digits>", e.g. "1-` + strings.Repeat("a", 8) + `..."`)
	}
	if len(secret) != 64 || strings.IndexFunc(secret, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) >= 0 {
		return 0, fmt.Errorf("API key %d: the part after %q must be 64 letters and digits", id, idText+"-")
	}
	return id, nil
}

func (a *authStore) checkPassword(user, password string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	want, ok := a.users[user]
	return ok && subtle.ConstantTimeCompare([]byte(want), []byte(password)) == 1
}

// keyResult is the outcome of presenting an API key.
type keyResult int

const (
	keyInvalid keyResult = iota // unknown, wrong, or already revoked
	keyValid
	keyRevokedNow // valid, but presented over plain text: now revoked
)

// useKey checks a presented key. revokeInsecure: the release revokes keys
// presented over plain text (25.04.2+) and this one was.
func (a *authStore) useKey(presented string, revokeInsecure bool) keyResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range a.keys {
		if subtle.ConstantTimeCompare([]byte(k.key), []byte(presented)) != 1 {
			continue
		}
		h := keyHash(k.key)
		if a.revoked[h] {
			return keyInvalid
		}
		if revokeInsecure {
			a.revoked[h] = true
			a.saveLocked()
			return keyRevokedNow
		}
		return keyValid
	}
	return keyInvalid
}

// reissue gives the named key a new secret (same id) and clears its
// revocation; "" when there is no such key.
func (a *authStore) reissue(name string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	k, ok := a.keys[name]
	if !ok {
		return ""
	}
	k.key = strconv.Itoa(k.id) + "-" + randomAlnum(64)
	a.reissued[name] = k.key
	a.saveLocked()
	return k.key
}

func (a *authStore) saveLocked() {
	st := authState{Reissued: a.reissued}
	for h := range a.revoked {
		st.Revoked = append(st.Revoked, h)
	}
	sort.Strings(st.Revoked)
	data, _ := json.MarshalIndent(st, "", "  ")
	tmp := a.file + ".tmp"
	if os.WriteFile(tmp, data, 0o600) == nil {
		_ = os.Rename(tmp, a.file)
	}
}

func keyHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func randomAlnum(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// ReissueAPIKey gives the API key called name (a key of Options.APIKeys) a
// new secret, as an administrator does after the server revoked it, and
// returns the new key ("" when there is no such key). The old one stops
// working.
func (s *Server) ReissueAPIKey(name string) string { return s.auth.reissue(name) }

// presentKey checks an API key for a session, revoking it when this
// release does so for keys sent over plain text.
func (s *Server) presentKey(key string, secure bool) bool {
	revoke := !secure && s.version.AtLeast(25, 4, 2)
	switch s.auth.useKey(key, revoke) {
	case keyValid:
		return true
	case keyRevokedNow:
		s.stats.revoked.Add(1)
		s.log.Warn("API key revoked: it was sent over an insecure transport")
	}
	return false
}
