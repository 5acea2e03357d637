package querykb

// automaton is an Aho-Corasick matcher over lowercased bytes: one pass over
// a line finds every anchor it contains, so scanning a large file costs
// the same with 30 entries or 300.
type automaton struct {
	delta [][256]int32 // full transition table
	out   [][]int32    // anchor ids ending at each state
}

func newAutomaton(anchors []string) *automaton {
	a := &automaton{delta: make([][256]int32, 1), out: make([][]int32, 1)}
	children := []map[byte]int32{{}}
	for id, s := range anchors {
		st := int32(0)
		for i := 0; i < len(s); i++ {
			c := s[i]
			nx, ok := children[st][c]
			if !ok {
				nx = int32(len(children))
				children = append(children, map[byte]int32{})
				a.delta = append(a.delta, [256]int32{})
				a.out = append(a.out, nil)
				children[st][c] = nx
			}
			st = nx
		}
		a.out[st] = append(a.out[st], int32(id))
	}
	fail := make([]int32, len(children))
	queue := make([]int32, 0, len(children))
	for c := 0; c < 256; c++ {
		if nx, ok := children[0][byte(c)]; ok {
			a.delta[0][c] = nx
			queue = append(queue, nx)
		}
	}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		a.out[st] = append(a.out[st], a.out[fail[st]]...)
		for c := 0; c < 256; c++ {
			if nx, ok := children[st][byte(c)]; ok {
				fail[nx] = a.delta[fail[st]][c]
				a.delta[st][c] = nx
				queue = append(queue, nx)
			} else {
				a.delta[st][c] = a.delta[fail[st]][c]
			}
		}
	}
	return a
}

// find calls fn for each anchor id found in lower (possibly repeatedly).
func (a *automaton) find(lower []byte, fn func(id int32)) {
	st := int32(0)
	for _, c := range lower {
		st = a.delta[st][c]
		for _, id := range a.out[st] {
			fn(id)
		}
	}
}

// lowerASCII writes s lowercased (ASCII letters only) into buf.
func lowerASCII(buf []byte, s string) []byte {
	buf = buf[:0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf
}
