package logscan

import (
	"regexp"
	"strconv"
	"strings"
)

// CI logs are a run of steps: the runner echoes a command, the command
// prints its output, and the runner reports how it exited. An engineer
// reads the output of the step that failed first, and distrusts errors
// printed by steps that passed (a retried download, a test that logs an
// error on purpose). stepTrack finds those regions as the events go by.

// stepLine kinds.
const (
	stepNone = iota
	stepEcho // a command echoed by the runner (see stepEchoes)
	stepEnd  // a line that may report a command's exit status
)

// stepEchoes are the prefixes CI runners echo a command with, at the start
// of the message: GitHub Actions "##[group]Run ", Jenkins "[Pipeline] ",
// Travis and GitLab "$ ", and within a step set -x "+ " and npm scripts
// "> ". The last two start a step only where none is open, since output
// can start so too (a diff's "+ added", a quoted "> line"). Indented, none
// is an echo ("    > 23 | expect(x)" in a code frame).
var stepEchoes = [...]string{"##[group]Run ", "[Pipeline] ", "$ ", "+ ", "> "}

// strongEchoes is how many of stepEchoes always start a step.
const strongEchoes = 3

// reStepExit reads a runner's report of a command's exit status: Travis's
// `The command "x" exited with 2.`, GitHub's "Process completed with exit
// code 1.", GitLab's "Job failed: exit code 1", Jenkins's "script returned
// exit code 2". A retry notice ("failed. Retrying, 2 of 3.") ends no step;
// nor does a whole build's verdict ("Your build exited with 1").
var reStepExit = regexp.MustCompile(`(?:The command ".*" (?:failed and )?exited with|Process completed with exit code|Job failed: exit code|script returned exit code) (\d+)`)

// stepLine classifies a message by its first bytes, once per template.
func stepLine(msg string) uint8 {
	for _, p := range stepEchoes {
		if echoedWith(msg, p) {
			return stepEcho
		}
	}
	if strings.Contains(msg, "exit") && reStepExit.MatchString(msg) {
		return stepEnd
	}
	return stepNone
}

// stepTail is how many lines before a failed step's exit report count as
// its last output.
const stepTail = 10

// maxSteps bounds the regions kept per file.
const maxSteps = 64

// stepTrack holds a file's step regions: from an echoed command's line to
// the line reporting its exit status, both included.
type stepTrack struct {
	start  int // the last echoed command's line; 0 none since the last exit
	failed [][2]int
	passed [][2]int
}

// line takes an event head whose template is a step line.
func (t *stepTrack) line(msg string, no int) {
	switch stepLine(msg) {
	case stepEcho:
		strong := false
		for _, p := range stepEchoes[:strongEchoes] {
			strong = strong || strings.HasPrefix(msg, p)
		}
		if strong || t.start == 0 {
			t.start = no
		}
	case stepEnd:
		m := reStepExit.FindStringSubmatch(msg)
		if m == nil || t.start == 0 {
			return
		}
		code, _ := strconv.Atoi(m[1])
		r := [2]int{t.start, no}
		if code != 0 && len(t.failed) < maxSteps {
			t.failed = append(t.failed, r)
		} else if code == 0 && len(t.passed) < maxSteps {
			t.passed = append(t.passed, r)
		}
		t.start = 0
	}
}

// regionOf returns the region of rs holding line no, or false.
func regionOf(rs [][2]int, no int) ([2]int, bool) {
	for _, r := range rs {
		if no >= r[0] && no <= r[1] {
			return r, true
		}
	}
	return [2]int{}, false
}
