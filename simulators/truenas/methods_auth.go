package truenas

import (
	"encoding/json"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// Credential kinds, as sessions and jobs report them.
const (
	credPassword = "LOGIN_PASSWORD"
	credAPIKey   = "API_KEY"
)

// registerAuth adds auth.login, auth.login_with_api_key, auth.login_ex,
// auth.logout and auth.me. They change the calling session.
func (s *Server) registerAuth() {
	s.reg.Add(middleware.Method{Name: "auth.login", Params: []string{"username", "password", "otp_token"},
		Handler: func(c *middleware.Call, p []json.RawMessage) (any, error) {
			var user, password string
			if err := decodeParams(p, "auth_login", []string{"username", "password"}, &user, &password); err != nil {
				return nil, err
			}
			return s.loginPassword(sessionOf(c.Ctx), user, password), nil
		}})
	s.reg.Add(middleware.Method{Name: "auth.login_with_api_key", Params: []string{"api_key"},
		Handler: func(c *middleware.Call, p []json.RawMessage) (any, error) {
			var key string
			if err := decodeParams(p, "auth_login_with_api_key", []string{"api_key"}, &key); err != nil {
				return nil, err
			}
			return s.loginKey(sessionOf(c.Ctx), "root", key), nil
		}})
	if s.version.AtLeast(25, 4, 0) { // 24.10 has no auth.login_ex
		s.reg.Add(middleware.Method{Name: "auth.login_ex", Params: []string{"login_data"}, Handler: s.loginEx})
	}
	s.reg.Add(middleware.Method{Name: "auth.logout", Handler: func(c *middleware.Call, _ []json.RawMessage) (any, error) {
		sessionOf(c.Ctx).logout()
		return true, nil
	}})
	s.reg.Add(middleware.Method{Name: "auth.me", Handler: func(c *middleware.Call, _ []json.RawMessage) (any, error) {
		_, cred := sessionOf(c.Ctx).identity()
		return userInfo(c.User, cred), nil
	}})
}

func (s *Server) loginPassword(ss *session, user, password string) bool {
	if !s.auth.checkPassword(user, password) {
		s.stats.loginFailures.Add(1)
		return false
	}
	ss.login(user, credPassword)
	s.stats.logins.Add(1)
	return true
}

// loginKey logs in with an API key; keys belong to root.
func (s *Server) loginKey(ss *session, user, key string) bool {
	if user != "root" || !s.presentKey(key, ss.secure) {
		s.stats.loginFailures.Add(1)
		return false
	}
	ss.login("root", credAPIKey)
	s.stats.logins.Add(1)
	return true
}

// loginEx is auth.login_ex: {"mechanism": "PASSWORD_PLAIN"|"API_KEY_PLAIN", ...}.
func (s *Server) loginEx(c *middleware.Call, p []json.RawMessage) (any, error) {
	var data struct {
		Mechanism string `json:"mechanism"`
		Username  string `json:"username"`
		Password  string `json:"password"`
		APIKey    string `json:"api_key"`
	}
	if err := decodeParams(p, "auth_login_ex", []string{"login_data"}, &data); err != nil {
		return nil, err
	}
	ss := sessionOf(c.Ctx)
	var ok bool
	switch data.Mechanism {
	case "PASSWORD_PLAIN":
		ok = s.loginPassword(ss, data.Username, data.Password)
	case "API_KEY_PLAIN":
		ok = s.loginKey(ss, data.Username, data.APIKey)
	case "AUTH_TOKEN_PLAIN", "OTP_TOKEN":
		// No tokens or OTP challenges are ever issued here.
		s.stats.loginFailures.Add(1)
	default:
		return nil, middleware.Invalid("auth_login_ex.login_data.mechanism",
			"Input should be 'API_KEY_PLAIN', 'PASSWORD_PLAIN', 'AUTH_TOKEN_PLAIN' or 'OTP_TOKEN'")
	}
	if !ok {
		return map[string]any{"response_type": "AUTH_ERR"}, nil
	}
	user, cred := ss.identity()
	return map[string]any{
		"response_type": "SUCCESS",
		"user_info":     userInfo(user, cred),
		"authenticator": "LEVEL_1",
	}, nil
}

// userInfo is what auth.me returns for a local account.
func userInfo(user, cred string) map[string]any {
	uid, home := 3000, "/var/empty"
	if user == "root" {
		uid, home = 0, "/root"
	}
	attrs := []string{"LOCAL", "PASSWORD_LOGIN"}
	if cred == credAPIKey {
		attrs = []string{"LOCAL", "API_KEY"}
	}
	return map[string]any{
		"pw_name": user, "pw_gecos": user, "pw_dir": home, "pw_shell": "/usr/bin/zsh", "pw_uid": uid, "pw_gid": uid,
		"grouplist": []int{uid}, "sid": nil, "source": "LOCAL", "local": true,
		"attributes": map[string]any{}, "two_factor_config": map[string]any{"secret_configured": false},
		"privilege":          map[string]any{"roles": map[string]any{"$set": []string{"FULL_ADMIN"}}, "web_shell": true},
		"account_attributes": attrs,
	}
}
