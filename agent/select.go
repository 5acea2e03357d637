package agent

import (
	"math"
	"sort"
	"strings"

	"github.com/sleuth-bot/sleuth/skills"
)

// offer returns the skills offered for a message: all of them when there
// are few; otherwise the core skills plus the others most similar to the
// message (cosine over word counts of name, description and when_to_use).
func (a *Agent) offer(goal string) []skills.Spec {
	all := a.cfg.Registry.List()
	if len(all) <= a.cfg.MaxOfferedSkills {
		out := make([]skills.Spec, len(all))
		for i, s := range all {
			out[i] = s.Spec()
		}
		return out
	}
	var out []skills.Spec
	type scored struct {
		spec  skills.Spec
		score float64
	}
	var rest []scored
	q := bagOfWords(goal)
	for _, s := range all {
		sp := s.Spec()
		if a.core[sp.Name] {
			out = append(out, sp)
			continue
		}
		rest = append(rest, scored{sp, cosine(q, bagOfWords(sp.Name+" "+sp.Description+" "+sp.WhenToUse))})
	}
	sort.SliceStable(rest, func(i, j int) bool { return rest[i].score > rest[j].score })
	for _, s := range rest {
		if len(out) >= a.cfg.MaxOfferedSkills || s.score == 0 {
			break
		}
		out = append(out, s.spec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

var stopWords = map[string]bool{
	"the": true, "a": true, "an": true, "and": true, "or": true, "of": true, "to": true, "in": true,
	"is": true, "it": true, "for": true, "on": true, "this": true, "that": true, "with": true,
	"what": true, "when": true, "use": true, "be": true, "me": true, "my": true, "i": true, "you": true,
}

func bagOfWords(s string) map[string]float64 {
	out := map[string]float64{}
	for _, w := range wordRE.FindAllString(strings.ToLower(s), -1) {
		if stopWords[w] || len(w) < 2 {
			continue
		}
		out[stem(w)]++
	}
	return out
}

// stem strips common English suffixes so "deploys" meets "deploy".
func stem(w string) string {
	for _, suf := range []string{"ing", "ed", "es", "s"} {
		if len(w) > len(suf)+2 && strings.HasSuffix(w, suf) {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

func cosine(a, b map[string]float64) float64 {
	var dot, na, nb float64
	for k, v := range a {
		dot += v * b[k]
		na += v * v
	}
	for _, v := range b {
		nb += v * v
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
