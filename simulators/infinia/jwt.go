package infinia

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// claims is the payload of a login token.
type claims struct {
	Sub   string `json:"sub"`
	Level string `json:"level"`
	Iat   int64  `json:"iat"`
	Exp   int64  `json:"exp"`
	JTI   string `json:"jti"`
}

var b64 = base64.RawURLEncoding

// jwtHeader is the fixed header of every token: HS256 only.
var jwtHeader = b64.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// signJWT makes an HS256 JWT of c with key.
func signJWT(key []byte, c claims) string {
	payload, _ := json.Marshal(c) // plain strings and ints: cannot fail
	unsigned := jwtHeader + "." + b64.EncodeToString(payload)
	return unsigned + "." + b64.EncodeToString(mac(key, unsigned))
}

func mac(key []byte, s string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(s))
	return h.Sum(nil)
}

var (
	errBadToken     = errors.New("invalid token")
	errExpiredToken = errors.New("token expired")
)

// verifyJWT checks the signature (so a token of an earlier key, i.e.
// before Restart or ExpireTokens, fails), the algorithm and the expiry.
func verifyJWT(key []byte, tok string, now time.Time) (claims, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return claims{}, errBadToken
	}
	hdr, err := b64.DecodeString(parts[0])
	if err != nil {
		return claims{}, errBadToken
	}
	var h struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(hdr, &h) != nil || h.Alg != "HS256" { // never "none"
		return claims{}, errBadToken
	}
	sig, err := b64.DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, mac(key, parts[0]+"."+parts[1])) {
		return claims{}, errBadToken
	}
	payload, err := b64.DecodeString(parts[1])
	if err != nil {
		return claims{}, errBadToken
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return claims{}, errBadToken
	}
	if now.Unix() >= c.Exp {
		return claims{}, errExpiredToken
	}
	return c, nil
}

// expiry is the exp of a token issued at now: rounded up to the next
// second so that a token lives at least ttl (exp is in whole seconds).
func expiry(now time.Time, ttl time.Duration) int64 {
	t := now.Add(ttl)
	if t.Truncate(time.Second).Equal(t) {
		return t.Unix()
	}
	return t.Unix() + 1
}
