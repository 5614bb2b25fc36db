package infinia

import (
	"sync/atomic"
	"time"
)

// verified is a token whose signature and claims were checked with key.
type verified struct {
	key *[]byte
	tok string
	c   claims
}

// tokenCache remembers the last token verified: a client sends the same
// token with every request for its lifetime (an hour), and checking it
// (an HMAC and two JSON decodes) was a tenth of the simulator's CPU per
// request. The expiry is still checked on every request; a new key
// (Restart, ExpireTokens) misses the cache, so the token is verified
// against the new key and refused.
type tokenCache struct {
	last atomic.Pointer[verified]
}

// verify is verifyJWT(*key, tok, now), remembering a success.
func (tc *tokenCache) verify(key *[]byte, tok string, now time.Time) (claims, error) {
	if v := tc.last.Load(); v != nil && v.key == key && v.tok == tok {
		if now.Unix() >= v.c.Exp {
			return claims{}, errExpiredToken
		}
		return v.c, nil
	}
	c, err := verifyJWT(*key, tok, now)
	if err == nil {
		tc.last.Store(&verified{key: key, tok: tok, c: c})
	}
	return c, err
}
