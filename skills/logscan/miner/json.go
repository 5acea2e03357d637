package miner

import "strings"

// parseJSON fills h from one JSON object line: the message is the string
// value of msg, message, log or MESSAGE (MsgStart/MsgEnd point inside its
// quotes, escapes left as written); level, time and logger/component come
// from their usual keys. Only top-level keys are read; anything malformed
// leaves the whole line as the message.
func parseJSON(s string, h *Header, year int, tc *timeCache) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i >= len(s) || s[i] != '{' {
		return
	}
	i++
	msgRank := 99
	for i < len(s) {
		i = skipWS(s, i)
		if i >= len(s) || s[i] == '}' {
			return
		}
		if s[i] == ',' {
			i++
			continue
		}
		if s[i] != '"' {
			return
		}
		ks, ke, ok := jsonString(s, i)
		if !ok {
			return
		}
		key := s[ks:ke]
		i = skipWS(s, ke+1)
		if i >= len(s) || s[i] != ':' {
			return
		}
		i = skipWS(s, i+1)
		if i >= len(s) {
			return
		}
		if s[i] == '"' {
			vs, ve, ok := jsonString(s, i)
			if !ok {
				return
			}
			val := s[vs:ve]
			switch strings.ToLower(key) {
			case "msg", "message", "log", "short_message", "text":
				if r := msgKeyRank(key); r < msgRank {
					msgRank = r
					h.MsgStart, h.MsgEnd = vs, ve
				}
			case "level", "lvl", "severity", "levelname", "loglevel", "log.level", "level_name":
				if h.Level == "" {
					h.Level = levelWord(val)
				}
			case "time", "ts", "timestamp", "@timestamp", "datetime", "date", "t":
				if h.Time == "" {
					h.Time = val
					if _, ms, ok := parseTime(val, 0, year, tc); ok {
						h.UnixMS = ms
					}
				}
			case "logger", "logger_name", "component", "module", "name", "caller", "source":
				if h.Component == "" {
					h.Component = val
				}
			}
			i = ve + 1
			continue
		}
		// A non-string value: numbers (epoch time, numeric level) or nested.
		e := skipValue(s, i)
		if e <= i {
			return
		}
		switch strings.ToLower(key) {
		case "time", "ts", "timestamp":
			if h.Time == "" {
				if _, ms, ok := epoch(s, i); ok {
					h.Time, h.UnixMS = s[i:e], ms
				}
			}
		case "level", "severity":
			if h.Level == "" {
				if v, ok := digits(s, i, e-i); ok && e-i <= 2 {
					h.Level = numericLevel(v)
				}
			}
		}
		i = e
	}
}

// numericLevel maps pino/bunyan numeric levels (10..60) and syslog 0..7.
func numericLevel(v int) string {
	switch {
	case v >= 60:
		return LevelFatal
	case v >= 50:
		return LevelError
	case v >= 40:
		return LevelWarn
	case v >= 30:
		return LevelInfo
	case v >= 20:
		return LevelDebug
	case v >= 10:
		return LevelTrace
	}
	return syslogLevel(v)
}

func skipWS(s string, i int) int {
	for i < len(s) && (isSpace(s[i]) || s[i] == '\r' || s[i] == '\n') {
		i++
	}
	return i
}

// jsonString returns the content span of the string starting at s[i]=='"'.
func jsonString(s string, i int) (int, int, bool) {
	j := i + 1
	for j < len(s) {
		switch s[j] {
		case '\\':
			j += 2
			continue
		case '"':
			return i + 1, j, true
		}
		j++
	}
	return 0, 0, false
}

// skipValue skips a non-string JSON value (number, literal, object, array).
func skipValue(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '"':
			_, e, ok := jsonString(s, j)
			if !ok {
				return -1
			}
			j = e
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j
			}
			depth--
			if depth == 0 {
				return j + 1
			}
		case ',':
			if depth == 0 {
				return j
			}
		}
	}
	return len(s)
}

func msgKeyRank(k string) int {
	for i, m := range [...]string{"msg", "message", "log", "short_message", "text"} {
		if strings.EqualFold(k, m) {
			return i
		}
	}
	return 99
}
