package skills

import (
	"errors"
	"fmt"
	"sort"
)

// ErrDuplicate reports two skills with one name.
var ErrDuplicate = errors.New("skill registered twice")

// Registry is the set of skills the agent may call, built once at start-up
// and read-only afterwards (safe for concurrent use).
type Registry struct {
	byName map[string]Skill
	names  []string
}

// NewRegistry registers the skills; a duplicate name is an error.
func NewRegistry(list ...Skill) (*Registry, error) {
	r := &Registry{byName: make(map[string]Skill, len(list))}
	for _, s := range list {
		name := s.Spec().Name
		if _, dup := r.byName[name]; dup {
			return nil, fmt.Errorf("%w: %q", ErrDuplicate, name)
		}
		r.byName[name] = s
		r.names = append(r.names, name)
	}
	sort.Strings(r.names)
	return r, nil
}

// Get returns the skill called name.
func (r *Registry) Get(name string) (Skill, bool) {
	s, ok := r.byName[name]
	return s, ok
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string { return append([]string(nil), r.names...) }

// List returns the skills sorted by name.
func (r *Registry) List() []Skill {
	out := make([]Skill, len(r.names))
	for i, n := range r.names {
		out[i] = r.byName[n]
	}
	return out
}
