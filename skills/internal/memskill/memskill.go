// Package memskill holds what the memory skills (search-memory, remember,
// forget) share: their constructor, argument decoding, the scope of a turn
// and the store errors a model can act on.
package memskill

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
)

// Base is what every memory skill holds: its long-term store (the skill's
// own small Store interface) and its parsed SKILL.md. Embed it; it is
// immutable, so safe for concurrent use when the store is.
type Base[S any] struct {
	store S
	spec  skills.Spec
}

// NewBase checks that store is set and parses skillMD; name (the skill's
// name) prefixes the errors.
func NewBase[S any](name string, store S, skillMD []byte) (Base[S], error) {
	if any(store) == nil {
		return Base[S]{}, fmt.Errorf("%s: Config.Store is required", name)
	}
	spec, err := skills.ParseSpec(skillMD)
	if err != nil {
		return Base[S]{}, fmt.Errorf("%s SKILL.md: %w", name, err)
	}
	return Base[S]{store: store, spec: spec}, nil
}

// Spec returns the parsed SKILL.md.
func (b Base[S]) Spec() skills.Spec { return b.spec }

// Store returns the long-term store.
func (b Base[S]) Store() S { return b.store }

// DecodeArgs decodes a call's arguments into v; no arguments leave v as it
// is. Malformed arguments are an error result (ok false) that shows like,
// an example object.
func DecodeArgs(raw json.RawMessage, v any, like string) (r skills.Result, ok bool) {
	if len(raw) == 0 {
		return skills.Result{}, true
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return skills.Errorf("arguments must be a JSON object like %s: %v", like, err), false
	}
	return skills.Result{}, true
}

// Scope returns the turn's memory scope narrowed by which ("", "all",
// "user" or "channel"). "user" keeps the channel so that the store still
// hides DM memories in a channel; callers drop channel records themselves.
func Scope(env skills.Env, which string) (memory.Scope, error) {
	sc := memory.Scope{Tenant: env.Tenant, User: env.User, Channel: env.Channel}
	switch which {
	case "", "all", memory.ScopeUser:
	case memory.ScopeChannel:
		if env.Channel == "" {
			return sc, errors.New("this is a DM: there are no channel memories here")
		}
		sc.User = ""
	default:
		return sc, fmt.Errorf("scope %q is not all, user or channel", which)
	}
	return sc, nil
}

// Keep reports whether a record passes the "user"/"channel"/"all" choice.
func Keep(r memory.Record, which string) bool {
	return which != memory.ScopeUser && which != memory.ScopeChannel || r.Scope == which
}

// storeError turns the errors a model can act on (store down, no scope,
// invalid record) into error results; other errors stay Go errors.
func storeError(err error) (skills.Result, bool) {
	switch {
	case err == nil:
		return skills.Result{}, false
	case errors.Is(err, memory.ErrUnavailable):
		return skills.Result{Status: skills.StatusError, Output: "Long-term memory is unavailable right now; carry on without it and tell the user it could not be used."}, true
	case errors.Is(err, memory.ErrScope):
		return skills.Result{Status: skills.StatusError, Output: fmt.Sprintf("No memory scope for this conversation: %v", err)}, true
	case errors.Is(err, memory.ErrInvalid):
		return skills.Result{Status: skills.StatusError, Output: err.Error()}, true
	}
	return skills.Result{}, false
}

// Fail is what Run returns for a store error: the error result of
// storeError when the model can act on it, else the error wrapped with
// the skill's name.
func Fail(name string, err error) (skills.Result, error) {
	if res, ok := storeError(err); ok {
		return res, nil
	}
	return skills.Result{}, fmt.Errorf("%s: %w", name, err)
}
