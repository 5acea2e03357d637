// Package memskill holds what the memory skills (search-memory, remember,
// forget) share: the scope of a turn and the store errors a model can act on.
package memskill

import (
	"errors"
	"fmt"

	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
)

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

// StoreError turns the errors a model can act on (store down, no scope,
// invalid record) into error results; other errors stay Go errors.
func StoreError(err error) (skills.Result, bool) {
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
