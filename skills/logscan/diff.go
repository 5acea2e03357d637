package logscan

import (
	"fmt"
	"sort"
)

// alignWindow is how far ahead in the baseline the aligner looks for the
// next event of the failing run before it calls it out of order.
const alignWindow = 512

// diff compares the analysed files with the baseline by template, and finds
// where the first analysed file left the baseline's order of events.
func (e *engine) diff(baseline string, ids, texts []string, lines, baseLines int64) *Diff {
	d := &Diff{Baseline: baseline, New: []Change{}, Vanished: []Change{}, Rising: []Change{}, Falling: []Change{}}
	e.divergeCluster = -1
	type agg struct {
		Change
		first int
	}
	byID := map[string]*agg{}
	var order []*agg
	for c := range e.cl {
		cs := &e.cl[c]
		if cs.count == 0 && cs.base == 0 {
			continue
		}
		a := byID[ids[c]]
		if a == nil {
			a = &agg{Change: Change{ID: ids[c], Template: texts[c]}, first: -1}
			byID[ids[c]] = a
			order = append(order, a)
		}
		a.Before += cs.base
		a.After += cs.count
		if cs.count > 0 && (a.first < 0 || cs.first < a.first) && cs.file == 0 {
			a.first = cs.first
		}
	}
	scale := 1.0
	if baseLines > 0 {
		scale = float64(lines) / float64(baseLines)
	}
	for _, a := range order {
		ch := a.Change
		if a.first > 0 {
			ch.FirstLine = a.first
		}
		exp := float64(a.Before) * scale
		switch {
		case a.Before == 0:
			d.New = append(d.New, ch)
		case a.After == 0:
			d.Vanished = append(d.Vanished, ch)
		case float64(a.After) >= 2*exp && float64(a.After)-exp >= 5:
			d.Rising = append(d.Rising, ch)
		case float64(a.After) <= exp/2 && exp-float64(a.After) >= 5:
			d.Falling = append(d.Falling, ch)
		}
	}
	sort.SliceStable(d.New, func(i, j int) bool { return d.New[i].FirstLine < d.New[j].FirstLine })
	sort.SliceStable(d.Vanished, func(i, j int) bool { return d.Vanished[i].Before > d.Vanished[j].Before })
	sort.SliceStable(d.Rising, func(i, j int) bool {
		return d.Rising[i].After-d.Rising[i].Before > d.Rising[j].After-d.Rising[j].Before
	})
	sort.SliceStable(d.Falling, func(i, j int) bool {
		return d.Falling[i].Before-d.Falling[i].After > d.Falling[j].Before-d.Falling[j].After
	})
	d.New, d.Vanished, d.Rising, d.Falling = capChanges(d.New), capChanges(d.Vanished), capChanges(d.Rising), capChanges(d.Falling)
	d.Divergence = e.divergence(ids, texts)
	return d
}

func capChanges(c []Change) []Change {
	if len(c) > maxChanges {
		return c[:maxChanges]
	}
	return c
}

// divergence aligns the failing run's events with the baseline's, on final
// template ids: equal ids extend the alignment, a lookahead of alignWindow
// events re-seeds it after reordering. The first event whose template the
// baseline never had is the divergence; if there is none and the baseline
// went on past the aligned point, the failing run stopped short.
func (e *engine) divergence(ids, texts []string) *LineRef {
	if len(e.files) == 0 {
		return nil
	}
	intern := map[string]int32{}
	id := func(c int32) int32 {
		s := ids[c]
		v, ok := intern[s]
		if !ok {
			v = int32(len(intern))
			intern[s] = v
		}
		return v
	}
	base := make([]int32, len(e.seq[0]))
	inBase := map[int32]bool{}
	for i, c := range e.seq[0] {
		base[i] = id(c)
		inBase[base[i]] = true
	}
	fail := e.seq[1][:len(e.seqLine)]
	j := 0
	for i, c := range fail {
		t := id(c)
		if j < len(base) && base[j] == t {
			j++
			continue
		}
		found := -1
		for k := j; k < len(base) && k < j+alignWindow; k++ {
			if base[k] == t {
				found = k
				break
			}
		}
		if found >= 0 {
			j = found + 1
			continue
		}
		if !inBase[t] {
			e.divergeCluster = c
			line := int(e.seqLine[i])
			text := e.cl[c].text
			if e.cl[c].first != line {
				text = texts[c]
			}
			return &LineRef{File: e.files[0].name, Line: line, Text: text}
		}
	}
	if j < len(base)-1 && len(fail) > 0 && len(fail) == len(e.seqLine) {
		last := len(fail) - 1
		next := ""
		for k := j; k < len(e.seq[0]); k++ {
			if c := e.seq[0][k]; int(c) < len(texts) {
				next = texts[c]
				break
			}
		}
		return &LineRef{File: e.files[0].name, Line: e.files[0].lines, Text: fmt.Sprintf("the run stopped at L%d; the good run went on with %q (%d more events)", e.seqLine[last], next, len(base)-j)}
	}
	return nil
}
