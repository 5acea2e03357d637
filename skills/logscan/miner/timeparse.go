package miner

// Timestamp shapes recognised at the start of a header item. Every parser
// takes the line and a start offset and returns the end offset (exclusive)
// and the time in Unix milliseconds; ok is false when the shape does not
// match. None of them allocates.

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// digits reads exactly n digits at i.
func digits(s string, i, n int) (int, bool) {
	if i < 0 || i+n > len(s) {
		return 0, false
	}
	v := 0
	for k := 0; k < n; k++ {
		c := s[i+k]
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// runDigits returns the end of the run of digits starting at i.
func runDigits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// month3 reads a three-letter month name (any case) at i; 1..12 or 0.
func month3(s string, i int) int {
	if i+3 > len(s) {
		return 0
	}
	switch uint32(s[i]|0x20)<<16 | uint32(s[i+1]|0x20)<<8 | uint32(s[i+2]|0x20) {
	case 'j'<<16 | 'a'<<8 | 'n':
		return 1
	case 'f'<<16 | 'e'<<8 | 'b':
		return 2
	case 'm'<<16 | 'a'<<8 | 'r':
		return 3
	case 'a'<<16 | 'p'<<8 | 'r':
		return 4
	case 'm'<<16 | 'a'<<8 | 'y':
		return 5
	case 'j'<<16 | 'u'<<8 | 'n':
		return 6
	case 'j'<<16 | 'u'<<8 | 'l':
		return 7
	case 'a'<<16 | 'u'<<8 | 'g':
		return 8
	case 's'<<16 | 'e'<<8 | 'p':
		return 9
	case 'o'<<16 | 'c'<<8 | 't':
		return 10
	case 'n'<<16 | 'o'<<8 | 'v':
		return 11
	case 'd'<<16 | 'e'<<8 | 'c':
		return 12
	}
	return 0
}

func day3(s string, i int) bool {
	if i+3 > len(s) {
		return false
	}
	switch uint32(s[i]|0x20)<<16 | uint32(s[i+1]|0x20)<<8 | uint32(s[i+2]|0x20) {
	case 'm'<<16 | 'o'<<8 | 'n', 't'<<16 | 'u'<<8 | 'e', 'w'<<16 | 'e'<<8 | 'd', 't'<<16 | 'h'<<8 | 'u',
		'f'<<16 | 'r'<<8 | 'i', 's'<<16 | 'a'<<8 | 't', 's'<<16 | 'u'<<8 | 'n':
		return true
	}
	return false
}

// skipAlpha skips letters (the rest of a long month or day name).
func skipAlpha(s string, i int) int {
	for i < len(s) && isAlpha(s[i]) {
		i++
	}
	return i
}

// clock reads H:M:S with one- or two-digit fields (HH:MM:SS as usual,
// "22:16:0" as some apps write it) and an optional fraction after '.', ','
// or ':'. It returns the end and the milliseconds into the day.
func clock(s string, i int) (int, int64, bool) {
	var f [3]int
	j := i
	if i+8 <= len(s) && s[i+2] == ':' && s[i+5] == ':' && (i+8 == len(s) || !isDigit(s[i+8])) &&
		isDigit(s[i]) && isDigit(s[i+1]) && isDigit(s[i+3]) && isDigit(s[i+4]) && isDigit(s[i+6]) && isDigit(s[i+7]) {
		// HH:MM:SS, the common shape, read in one go
		f[0] = int(s[i]-'0')*10 + int(s[i+1]-'0')
		f[1] = int(s[i+3]-'0')*10 + int(s[i+4]-'0')
		f[2] = int(s[i+6]-'0')*10 + int(s[i+7]-'0')
		j = i + 8
	} else {
		for k := 0; k < 3; k++ {
			e := runDigits(s, j)
			if e-j < 1 || e-j > 2 {
				return 0, 0, false
			}
			f[k], _ = digits(s, j, e-j)
			j = e
			if k < 2 {
				if j >= len(s) || s[j] != ':' {
					return 0, 0, false
				}
				j++
			}
		}
	}
	h, m, sec := f[0], f[1], f[2]
	if h > 24 || m > 59 {
		return 0, 0, false
	}
	return clockTail(s, j, int64(h)*3600000+int64(m)*60000, sec)
}

// clockTail ends clock: sec is the seconds field, read up to s[j], and
// hm the hours and minutes in milliseconds; it reads the fraction.
func clockTail(s string, j int, hm int64, sec int) (int, int64, bool) {
	if sec > 60 {
		return 0, 0, false
	}
	ms := int64(0)
	if j+1 < len(s) && (s[j] == '.' || s[j] == ',' || s[j] == ':') && isDigit(s[j+1]) {
		if j+4 <= len(s) && isDigit(s[j+2]) && isDigit(s[j+3]) && (j+4 == len(s) || !isDigit(s[j+4])) {
			// exactly milliseconds, the common shape
			ms = int64(s[j+1]-'0')*100 + int64(s[j+2]-'0')*10 + int64(s[j+3]-'0')
			return j + 4, hm + int64(sec)*1000 + ms, true
		}
		e := runDigits(s, j+1)
		if e-(j+1) > 9 {
			return 0, 0, false
		}
		// the first three digits are milliseconds
		v := 0
		for k := 0; k < 3; k++ {
			v *= 10
			if j+1+k < e {
				v += int(s[j+1+k] - '0')
			}
		}
		ms = int64(v)
		j = e
	}
	return j, hm + int64(sec)*1000 + ms, true
}

// zone reads Z, ±HH:MM, ±HHMM or ±HH after a clock; it returns the end and
// the offset in milliseconds east of UTC.
func zone(s string, i int) (int, int64) {
	if i < len(s) && s[i] == 'Z' {
		if i+1 == len(s) || !isAlpha(s[i+1]) {
			return i + 1, 0
		}
		return i, 0
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		sign := int64(1)
		if s[i] == '-' {
			sign = -1
		}
		h, ok := digits(s, i+1, 2)
		if !ok {
			return i, 0
		}
		j := i + 3
		m := 0
		if j < len(s) && s[j] == ':' {
			if mm, ok := digits(s, j+1, 2); ok {
				m, j = mm, j+3
			}
		} else if mm, ok := digits(s, j, 2); ok {
			m, j = mm, j+2
		}
		if j < len(s) && isDigit(s[j]) {
			return i, 0
		}
		return j, sign * (int64(h)*3600000 + int64(m)*60000)
	}
	return i, 0
}

func unixMS(year, month, day int, dayMS int64) int64 {
	if month < 1 || month > 12 || day < 1 || day > 31 {
		return 0
	}
	return daysFromCivil(year, month, day)*86400000 + dayMS
}

// timeCache remembers the last date a goroutine converted: consecutive log
// lines almost always share it, so only the time of day is converted per
// line. A nil *timeCache converts from scratch. Not safe for concurrent
// use: one per goroutine (see Parser). Keys are copied, never views of the
// line, since the engine recycles line buffers.
type timeCache struct {
	// the last civil date and its days since the epoch
	y, mo, d int
	days     int64
	dayOK    bool

	// syslogTime: the bytes from the start of the timestamp through the
	// day of month ("Jan  5", "Mon, Jan 5") and the month and day read
	// from them; sn == 0 when empty
	sn      int
	skey    [syslogKeyMax]byte
	smo, sd int

	// isoLike: the bytes from the start of the timestamp through "HH:MM:"
	// and the Unix milliseconds they stand for; in == 0 when empty
	in    int
	ikey  [isoKeyMax]byte
	ibase int64
}

const syslogKeyMax = 32

// isoKeyMax bounds the remembered ISO prefix: the date, its separator and
// spaces, and "HH:MM:" (17 bytes in the common shapes).
const isoKeyMax = 24

// keepISO remembers, after isoLike read an ISO date at s[i] and a clock at
// s[k] in clock's fast shape (HH:MM:SS), the bytes up to the seconds and
// the milliseconds they stand for (base: the date; plus hours and
// minutes; clock has checked that s[k:k+5] holds them), so that isoHit can read a line sharing them from its seconds
// on. A date unixMS rejects is not remembered.
func (c *timeCache) keepISO(s string, i, k int, base int64, mo, d int) {
	n := k + 6 - i
	if c == nil || n > isoKeyMax || mo < 1 || mo > 12 || d < 1 || d > 31 ||
		k+8 > len(s) || s[k+2] != ':' || s[k+5] != ':' || !isDigit(s[k+6]) || !isDigit(s[k+7]) {
		return
	}
	h := int64(s[k]-'0')*10 + int64(s[k+1]-'0')
	m := int64(s[k+3]-'0')*10 + int64(s[k+4]-'0')
	c.in = copy(c.ikey[:], s[i:i+n])
	c.ibase = base + h*3600000 + m*60000
}

// isoHit is isoLike for a line whose bytes from s[i] start with the
// remembered prefix: only the seconds, fraction and zone are read. It
// takes exactly the steps of isoLike and clock's fast path after the
// prefix, and reports !ok (isoLike then reads the whole line) wherever
// they would branch otherwise.
func (c *timeCache) isoHit(s string, i int) (int, int64, bool) {
	if c == nil || c.in == 0 {
		return 0, 0, false
	}
	j := i + c.in
	if j+8 <= len(s) && s[i:j] == string(c.ikey[:c.in]) {
		// The common shape, "SS.mmm " with no zone after it, read with
		// one bounds check: what the steps below return for it.
		t := s[j : j+8]
		if isDigit(t[0]) && isDigit(t[1]) && (t[2] == '.' || t[2] == ',') && isDigit(t[3]) && isDigit(t[4]) && isDigit(t[5]) &&
			t[6] == ' ' && t[7] != '+' && t[7] != '-' {
			sec := int64(t[0]-'0')*10 + int64(t[1]-'0')
			if sec <= 60 {
				ms := int64(t[3]-'0')*100 + int64(t[4]-'0')*10 + int64(t[5]-'0')
				return j + 6, c.ibase + sec*1000 + ms, true
			}
		}
	}
	if j+2 > len(s) || s[i:j] != string(c.ikey[:c.in]) ||
		!isDigit(s[j]) || !isDigit(s[j+1]) || j+2 < len(s) && isDigit(s[j+2]) {
		return 0, 0, false
	}
	e, dms, ok := clockTail(s, j+2, 0, int(s[j]-'0')*10+int(s[j+1]-'0'))
	if !ok {
		return 0, 0, false
	}
	e, off, ok := isoZone(s, e)
	if !ok {
		return 0, 0, false
	}
	return e, c.ibase + dms - off, true
}

// unixMS is the package unixMS, remembering the last date's day number.
func (c *timeCache) unixMS(year, month, day int, dayMS int64) int64 {
	if c == nil {
		return unixMS(year, month, day, dayMS)
	}
	if month < 1 || month > 12 || day < 1 || day > 31 {
		return 0
	}
	if !c.dayOK || c.y != year || c.mo != month || c.d != day {
		c.y, c.mo, c.d, c.days, c.dayOK = year, month, day, daysFromCivil(year, month, day), true
	}
	return c.days*86400000 + dayMS
}

// daysFromCivil returns the days from 1970-01-01 to a proleptic Gregorian
// date; a day past the month's end counts on into the next month, as
// time.Date normalises it (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// boundary reports whether position i ends a token (end, space or
// punctuation that commonly follows a timestamp).
func boundary(s string, i int) bool {
	if i >= len(s) {
		return true
	}
	switch s[i] {
	case ' ', '\t', ']', ')', '|', ',', ';', '"', '\'', '>':
		return true
	case ':', '-':
		return i+1 >= len(s) || s[i+1] == ' '
	}
	return false
}

// syslogFirst marks the letters (either case) that start a month or a
// weekday name: a syslog date can start with no other byte, so items such
// as "INFO" or "ERROR" skip syslogTime at once.
var syslogFirst = func() (t [256]bool) {
	for _, c := range "jfmasondtw" {
		t[c], t[c-'a'+'A'] = true, true
	}
	return t
}()

// parseTime recognises a timestamp at s[i:]. year is used for shapes that
// carry none.
func parseTime(s string, i int, year int, tc *timeCache) (end int, ms int64, ok bool) {
	if i >= len(s) {
		return 0, 0, false
	}
	c := s[i]
	if isDigit(c) {
		// dispatch on the length of the leading run of digits
		switch runDigits(s, i) - i {
		case 4:
			return isoLike(s, i, tc)
		case 6, 8:
			return compactDate(s, i, tc)
		case 2:
			if e, v, ok := monthDay(s, i, year, tc); ok {
				return e, v, true
			}
			if e, v, ok := dayMonYear(s, i, tc); ok {
				return e, v, true
			}
			if e, v, ok := clock(s, i); ok && boundary(s, e) {
				return e, v, true // time of day only
			}
		case 1:
			if e, v, ok := clock(s, i); ok && boundary(s, e) {
				return e, v, true
			}
		case 10, 13:
			return epoch(s, i)
		}
		return 0, 0, false
	}
	if syslogFirst[c] && i+3 < len(s) && (s[i+3] == ' ' || s[i+3] == ',' || isAlpha(s[i+3])) {
		// A syslog date starts with a month or weekday name; words such
		// as "worker" or "WARN" stop here, before syslogTime's checks.
		if month3(s, i) == 0 && !day3(s, i) {
			return 0, 0, false
		}
		return syslogTime(s, i, year, tc)
	}
	return 0, 0, false
}

// isoZone reads what may follow an ISO time ending at s[e]: a zone, a
// second zone after a space, and then a boundary.
func isoZone(s string, e int) (int, int64, bool) {
	e, off := zone(s, e)
	if e < len(s) && s[e] == ' ' && e+1 < len(s) && (s[e+1] == '+' || s[e+1] == '-') {
		if e2, off2 := zone(s, e+1); e2 > e+1 && boundary(s, e2) {
			e, off = e2, off2
		}
	}
	return e, off, boundary(s, e)
}

// isoLike: YYYY-MM-DD[T ]HH:MM:SS[.frac][zone], also with '/' or '.'
// between date parts.
func isoLike(s string, i int, tc *timeCache) (int, int64, bool) {
	if e, ms, ok := tc.isoHit(s, i); ok {
		return e, ms, true
	}
	y, ok := digits(s, i, 4)
	if !ok || i+4 >= len(s) {
		return 0, 0, false
	}
	sep := s[i+4]
	if sep != '-' && sep != '/' && sep != '.' {
		return 0, 0, false
	}
	mo, ok1 := digits(s, i+5, 2)
	if !ok1 || i+7 >= len(s) || s[i+7] != sep {
		return 0, 0, false
	}
	d, ok2 := digits(s, i+8, 2)
	if !ok2 {
		return 0, 0, false
	}
	j := i + 10
	if j+1 < len(s) && (s[j] == 'T' || s[j] == ' ' || s[j] == '_' || s[j] == '-' || s[j] == ':') {
		k := j + 1
		for k < len(s) && s[k] == ' ' {
			k++
		}
		if e, dms, ok := clock(s, k); ok {
			if e, off, ok := isoZone(s, e); ok {
				ms := tc.unixMS(y, mo, d, dms)
				tc.keepISO(s, i, k, ms-dms, mo, d)
				return e, ms - off, true
			}
		}
	}
	if boundary(s, j) && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 {
		return j, tc.unixMS(y, mo, d, 0), true // date only
	}
	return 0, 0, false
}

// compactDate: YYYYMMDD[-T :]HH:MM:SS[:mmm], YYYYMMDD[-T :]HHMMSS[.mmm] and
// YYMMDD HHMMSS.
func compactDate(s string, i int, tc *timeCache) (int, int64, bool) {
	if y, ok := digits(s, i, 4); ok {
		mo, _ := digits(s, i+4, 2)
		d, ok2 := digits(s, i+6, 2)
		if ok2 && i+8 < len(s) && (s[i+8] == '-' || s[i+8] == 'T' || s[i+8] == ' ' || s[i+8] == ':') {
			if e, dms, ok := clock(s, i+9); ok && boundary(s, e) {
				return e, tc.unixMS(y, mo, d, dms), true
			}
			if hh, ok := digits(s, i+9, 6); ok {
				dms := int64(hh/10000)*3600000 + int64(hh/100%100)*60000 + int64(hh%100)*1000
				e := i + 15
				if e+3 < len(s) && s[e] == '.' {
					// Zabbix's "20240529:085755.556": milliseconds
					if f, ok := digits(s, e+1, 3); ok {
						dms, e = dms+int64(f), e+4
					}
				}
				if boundary(s, e) {
					return e, tc.unixMS(y, mo, d, dms), true
				}
			}
		}
	}
	if ymd, ok := digits(s, i, 6); ok && i+6 < len(s) && s[i+6] == ' ' {
		if hms, ok := digits(s, i+7, 6); ok && boundary(s, i+13) {
			mo, d := ymd/100%100, ymd%100
			h, m, sec := hms/10000, hms/100%100, hms%100
			if mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h < 24 && m < 60 && sec <= 60 {
				dms := int64(h)*3600000 + int64(m)*60000 + int64(sec)*1000
				return i + 13, tc.unixMS(2000+ymd/10000, mo, d, dms), true
			}
		}
	}
	return 0, 0, false
}

// monthDay: MM-DD HH:MM:SS[.mmm] (Android logcat).
func monthDay(s string, i int, year int, tc *timeCache) (int, int64, bool) {
	mo, ok := digits(s, i, 2)
	if !ok || i+2 >= len(s) || (s[i+2] != '-' && s[i+2] != '/') {
		return 0, 0, false
	}
	d, ok := digits(s, i+3, 2)
	if !ok || i+5 >= len(s) || s[i+5] != ' ' {
		return 0, 0, false
	}
	e, dms, ok := clock(s, i+6)
	if !ok || !boundary(s, e) || mo < 1 || mo > 12 {
		return 0, 0, false
	}
	return e, tc.unixMS(year, mo, d, dms), true
}

// dayMonYear: DD/Mon/YYYY:HH:MM:SS zone (access logs).
func dayMonYear(s string, i int, tc *timeCache) (int, int64, bool) {
	d, ok := digits(s, i, 2)
	if !ok || i+2 >= len(s) || s[i+2] != '/' {
		return 0, 0, false
	}
	mo := month3(s, i+3)
	if mo == 0 || i+6 >= len(s) || s[i+6] != '/' {
		return 0, 0, false
	}
	y, ok := digits(s, i+7, 4)
	if !ok || i+11 >= len(s) || s[i+11] != ':' {
		return 0, 0, false
	}
	e, dms, ok := clock(s, i+12)
	if !ok {
		return 0, 0, false
	}
	off := int64(0)
	if e+1 < len(s) && s[e] == ' ' && (s[e+1] == '+' || s[e+1] == '-') {
		if e2, o := zone(s, e+1); e2 > e+1 {
			e, off = e2, o
		}
	}
	return e, tc.unixMS(y, mo, d, dms) - off, true
}

// epoch: 10-digit seconds or 13-digit milliseconds, optional fraction,
// between 2001 and 2286.
func epoch(s string, i int) (int, int64, bool) {
	e := runDigits(s, i)
	n := e - i
	if n != 10 && n != 13 {
		return 0, 0, false
	}
	v, _ := digits(s, i, n)
	ms := int64(v)
	if n == 10 {
		ms *= 1000
		if e+1 < len(s) && s[e] == '.' && isDigit(s[e+1]) {
			f := runDigits(s, e+1)
			frac, _ := digits(s, e+1, min(3, f-(e+1)))
			for k := f - (e + 1); k < 3; k++ {
				frac *= 10
			}
			ms += int64(frac)
			e = f
		}
	}
	if ms < 978307200000 || !boundary(s, e) {
		return 0, 0, false
	}
	return e, ms, true
}

// syslogTime: [Weekday ]Mon DD HH:MM:SS[ YYYY]; also "Mon DD, YYYY HH:MM:SS".
func syslogTime(s string, i int, year int, tc *timeCache) (int, int64, bool) {
	var mo, d, j int
	if tc != nil && tc.sn > 0 && i+tc.sn < len(s) && !isDigit(s[i+tc.sn]) && s[i:i+tc.sn] == string(tc.skey[:tc.sn]) {
		// Same month-and-day prefix as last time: it reads the same.
		mo, d, j = tc.smo, tc.sd, i+tc.sn
	} else if mo, d, j = syslogDate(s, i); mo == 0 {
		return 0, 0, false
	} else if tc != nil && j-i <= syslogKeyMax {
		tc.sn = copy(tc.skey[:], s[i:j])
		tc.smo, tc.sd = mo, d
	}
	if j < len(s) && s[j] == ',' { // "Jan 2, 2006 15:04:05"
		if y, ok := digits(s, j+2, 4); ok {
			year, j = y, j+6
		}
	}
	if j >= len(s) || s[j] != ' ' {
		return 0, 0, false
	}
	ce, dms, ok := clock(s, j+1)
	if !ok {
		return 0, 0, false
	}
	if y, ok := digits(s, ce+1, 4); ok && ce < len(s) && s[ce] == ' ' && boundary(s, ce+5) {
		year, ce = y, ce+5
	}
	if !boundary(s, ce) {
		return 0, 0, false
	}
	return ce, tc.unixMS(year, mo, d, dms), true
}

// syslogDate reads "[Weekday ]Mon DD" at s[i:]; it returns the month (0
// when the shape does not match), the day and the end of the day's digits.
// What it reads depends only on s[i:end] and on s[end] not being a digit.
func syslogDate(s string, i int) (mo, d, end int) {
	j := i
	if day3(s, j) {
		k := skipAlpha(s, j)
		if k < len(s) && s[k] == ',' {
			k++
		}
		if k < len(s) && s[k] == ' ' {
			j = k + 1
		} else {
			return 0, 0, 0
		}
	}
	mo = month3(s, j)
	if mo == 0 {
		return 0, 0, 0
	}
	j = skipAlpha(s, j)
	if j >= len(s) || s[j] != ' ' {
		return 0, 0, 0
	}
	for j < len(s) && s[j] == ' ' {
		j++
	}
	e := runDigits(s, j)
	if e-j < 1 || e-j > 2 {
		return 0, 0, 0
	}
	d, _ = digits(s, j, e-j)
	return mo, d, e
}
