package miner

import "strings"

// Oracle WebLogic Server writes its server and domain logs as fields in
// angle brackets after "####":
//
//	####<Jun 3, 2024, 2:11:27,263 AM Coordinated Universal Time> <Warning> <JDBC> <host> <server>
//	<[ACTIVE] ExecuteThread: '8' for queue: '…'> <<WLS Kernel>> <> <context id> <1717380687263>
//	<[severity-value: 16] [rid: 0] …> <BEA-001129> <Received exception while creating connection …
//
// (one line in the file): the time as written, the severity, the
// subsystem, the machine, the server, the thread, the user, the
// transaction and diagnostic context ids, the time in Unix milliseconds,
// supplemental attributes, the message id and the message, whose last
// line ends with ">". Older versions write ten fields, without the
// diagnostic context and supplemental attributes. The layout detector's
// items (short fields, no nesting) cannot read it.
const webLogicMark = "####<"

// webLogicFields is how many fields come before the message id: 11 in
// the current format, 9 in the older one.
const (
	webLogicFields    = 11
	webLogicOldFields = 9
	maxWebLogicField  = 512
)

// parseWebLogic reads a WebLogic log line into h; false when line is not
// one. The message is read from its id on ("BEA-001129> <Received …"),
// the id being the message's name.
func parseWebLogic(line string, h *Header) bool {
	if !strings.HasPrefix(line, webLogicMark) {
		return false
	}
	var f [webLogicFields + 1][2]int
	n := 0
	i := len(webLogicMark) - 1
	for n < len(f) && i < len(line) && line[i] == '<' {
		e := angleEnd(line, i)
		if e < 0 {
			break
		}
		f[n] = [2]int{i + 1, e}
		n++
		i = e + 1
		for i < len(line) && line[i] == ' ' {
			i++
		}
	}
	// the message id is the field after the fixed ones: "BEA-…" or
	// another product's prefix ("WL-", "DFW-"), letters, '-' and digits
	id := -1
	for _, k := range []int{webLogicFields, webLogicOldFields} {
		if k < n && messageID(line[f[k][0]:f[k][1]]) {
			id = k
			break
		}
	}
	if id < 0 {
		return false
	}
	h.Time = line[f[0][0]:f[0][1]]
	raw := id - 2 // the supplemental attributes lie between
	if id == webLogicOldFields {
		raw = id - 1
	}
	if r := line[f[raw][0]:f[raw][1]]; r != "" {
		if e, ms, ok := epoch(r, 0); ok && e == len(r) {
			h.UnixMS = ms
		}
	}
	h.Level = levelWord(line[f[1][0]:f[1][1]])
	h.Component = line[f[2][0]:f[2][1]]
	h.MsgStart = f[id][0]
	return true
}

// angleEnd returns the index of the '>' that closes the '<' at s[i],
// counting nested pairs ("<<WLS Kernel>>"), or -1 when none does within
// maxWebLogicField bytes.
func angleEnd(s string, i int) int {
	depth := 0
	for j := i; j < len(s) && j-i <= maxWebLogicField; j++ {
		switch s[j] {
		case '<':
			depth++
		case '>':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// messageID reports whether s looks like a WebLogic message id:
// "BEA-001129", "WL-000001", letters, a '-' and digits.
func messageID(s string) bool {
	d := strings.IndexByte(s, '-')
	if d < 2 || d > 6 || d == len(s)-1 || len(s) > 16 {
		return false
	}
	for k := 0; k < d; k++ {
		if s[k] < 'A' || s[k] > 'Z' {
			return false
		}
	}
	for k := d + 1; k < len(s); k++ {
		if !isDigit(s[k]) {
			return false
		}
	}
	return true
}
