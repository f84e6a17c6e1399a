package frigate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ErrStatus is wrapped by errors for an HTTP answer that is not 2xx.
var ErrStatus = errors.New("frigate: HTTP status")

// A StatusError is an HTTP answer that is not 2xx; it wraps ErrStatus.
type StatusError struct {
	Code        int
	Method, URL string
	Body        string // its first 200 bytes
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%v %d from %s %s: %s", ErrStatus, e.Code, e.Method, e.URL, e.Body)
}

func (e *StatusError) Unwrap() error { return ErrStatus }

// ErrLogin is wrapped by the errors of a refused login.
var ErrLogin = errors.New("frigate: login refused")

// ErrRedirect is wrapped by the error of a redirect off Frigate's host
// and port (the request is not followed there).
var ErrRedirect = errors.New("frigate: redirect off the Frigate host refused")

// maxBody bounds an answer's body (a snapshot; Frigate's are well under).
const maxBody = 32 << 20

// client returns cfg.HTTP, or a client without a timeout of its own
// (each request carries its own deadline), that follows a redirect only
// to Frigate's own scheme, host and port, at most 3 times.
func (l *Labeller) client() *http.Client {
	c := http.Client{}
	if l.cfg.HTTP != nil {
		c = *l.cfg.HTTP
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != l.base.Scheme || req.URL.Host != l.base.Host {
			return fmt.Errorf("%w: %s", ErrRedirect, req.URL.Redacted())
		}
		if len(via) >= 3 {
			return fmt.Errorf("frigate: more than 3 redirects from %s", via[0].URL.Redacted())
		}
		return nil
	}
	return &c
}

// Login logs in to Frigate's authenticated port (8971) when Config.User
// is set: POST /api/login with {"user", "password"}
// (frigate/api/auth.py: login, AppPostLoginBody). Frigate answers 200
// with the JWT in a cookie (auth.cookie_name, "frigate_token" by
// default) and 401 "Login failed"; a Frigate whose auth is disabled
// answers 404 "Authentication is disabled" (its port 5000 needs no
// login). The token is then sent as "Authorization: Bearer" (auth.py's
// auth endpoint reads that header before the cookie). Without User,
// Login does nothing.
func (l *Labeller) Login(ctx context.Context) error {
	if l.cfg.User == "" {
		return nil
	}
	b, _ := json.Marshal(map[string]string{"user": l.cfg.User, "password": l.cfg.Password})
	u := *l.base
	u.Path = l.base.Path + "/api/login"
	ctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.http.Do(req)
	if err != nil {
		return fmt.Errorf("frigate: login at %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	switch {
	case resp.StatusCode == http.StatusNotFound && bytes.Contains(msg, []byte("disabled")):
		return fmt.Errorf("%w at %s: Frigate's authentication is disabled (no login needed: drop the Frigate user)", ErrLogin, u.Redacted())
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%w at %s as %q: wrong user or password (%d %.100s)", ErrLogin, u.Redacted(), l.cfg.User, resp.StatusCode, msg)
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("%w at %s: HTTP %d %.100s", ErrLogin, u.Redacted(), resp.StatusCode, msg)
	}
	var token string
	for _, c := range resp.Cookies() {
		if c.Name == l.cfg.Cookie {
			token = c.Value
		}
	}
	if token == "" {
		return fmt.Errorf("%w at %s: no %s cookie in the answer (Frigate's auth.cookie_name: set --frigate-cookie)", ErrLogin, u.Redacted(), l.cfg.Cookie)
	}
	l.mu.Lock()
	l.token = token
	l.mu.Unlock()
	l.cfg.Log.Info("frigate: logged in", "url", u.Redacted(), "user", l.cfg.User)
	return nil
}

// do sends one request with retries and returns the body of a 2xx
// answer. Each attempt has an overall deadline of Timeout (connection,
// headers and body), so a server that sends a byte a second holds one
// worker for Timeout at most. A 401 with a login configured logs in
// again once (the token expired: auth.session_length).
func (l *Labeller) do(ctx context.Context, method string, u *url.URL, body []byte) ([]byte, error) {
	wait := l.cfg.Backoff
	relogged := false
	for try := 0; ; try++ {
		b, status, retry, err := l.once(ctx, method, u, body)
		if err == nil {
			return b, nil
		}
		if status == http.StatusUnauthorized && l.cfg.User != "" && !relogged {
			relogged = true
			if lerr := l.Login(ctx); lerr != nil {
				return nil, errors.Join(err, lerr)
			}
			try--
			continue
		}
		if !retry || try >= l.cfg.Retries || ctx.Err() != nil {
			return nil, err
		}
		l.cfg.Log.Warn("frigate: retrying", "method", method, "url", u.Redacted(), "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func (l *Labeller) once(ctx context.Context, method string, u *url.URL, body []byte) ([]byte, int, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, 0, false, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	l.mu.Lock()
	if l.token != "" {
		req.Header.Set("Authorization", "Bearer "+l.token)
	}
	l.mu.Unlock()
	resp, err := l.http.Do(req)
	if err != nil {
		return nil, 0, !errors.Is(err, ErrRedirect), err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		if ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.Canceled) {
			err = fmt.Errorf("%s %s: not read whole in %v: %w", method, u.Redacted(), l.cfg.Timeout, err)
		}
		return nil, 0, true, err
	}
	if len(b) > maxBody {
		return nil, 0, false, fmt.Errorf("%s %s: answer over %d bytes", method, u.Redacted(), maxBody)
	}
	if resp.StatusCode/100 != 2 {
		retry := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
		msg := strings.TrimSpace(string(b[:min(len(b), 200)]))
		return nil, resp.StatusCode, retry, &StatusError{Code: resp.StatusCode, Method: method, URL: u.Redacted(), Body: msg}
	}
	return b, resp.StatusCode, false, nil
}
