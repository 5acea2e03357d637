package logscan

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// CI logs are a run of steps: the runner echoes a command, the command
// prints its output, and the runner reports how it exited. An engineer
// reads the output of the step that failed first, and distrusts errors
// printed by steps that passed (a retried download, a test that logs an
// error on purpose). stepTrack finds those regions as the events go by,
// and likewise the regions of a test runner's tests and of a diff's hunks.

// stepLine kinds.
const (
	stepNone      = iota
	stepEcho      // a command echoed by the runner (see stepEchoes)
	stepEnd       // a line that may report a command's exit status
	stepAfter     // the runner moves on from the job's script to its after-script
	stepRunner    // the runner's own stage after the script (see runnerStages)
	stepSetup     // the runner's own stage before the script (see setupStages)
	stepScript    // the runner starts the job's script
	stepPipe      // a Jenkins pipeline's structure line: it ends a shell step's output
	stepTest      // a test runner's line for a test starting or ending (see testLine)
	stepHunk      // a unified diff's hunk header, "@@ -18,7 +18,8 @@"
	stepGroupEnd  // GitHub Actions' "##[endgroup]": a step's echoed script and settings end
	stepTask      // a Gradle task header ("> Task :app:compileKotlin") or the build's verdict after them
	stepWrong     // Gradle's "* What went wrong:", or the "* Try:" after it
	stepMojo      // a Maven plugin goal's header, "--- jacoco:0.8.12:check (check-coverage) @ fx ---", or the reactor summary after them
	stepMojoFail  // Maven's "Failed to execute goal …:check (check-coverage) on project fx: …"
	stepScriptIn  // Azure Pipelines' "Script contents:": the task's script follows
	stepScriptOut // Azure Pipelines' "=== Starting Command Output ===": the script's output follows
)

// A runner echoes the script of a step before it runs it: GitHub Actions
// inside the step's group, after "##[group]Run <first line>" and up to
// "##[endgroup]" (with the shell and environment), Azure Pipelines between
// "Script contents:" and "Starting Command Output". Those lines are the
// script's text, not its output: `if [ "$STATUS" == "Failed" ]` reports
// nothing. maxScript bounds the lines such a region may cover.
const (
	azureScript = "Script contents:"
	azureOutput = "Starting Command Output"
	maxScript   = 200
)

// Maven prints a header for each plugin goal it runs in a module, "---
// jacoco:0.8.12:check (check-coverage) @ ledger-fx ---" (older versions
// name the artifact, "maven-compiler-plugin:3.11.0:compile"), and names the
// goal that failed the build at its end, "Failed to execute goal
// org.jacoco:jacoco-maven-plugin:0.8.12:check (check-coverage) on project
// ledger-fx: Coverage checks have not been met. See log above": the lines
// under that goal's header are the failed step's output. The goal, its
// execution id and the module tie the two together.
var (
	reMojo     = regexp.MustCompile(`--- [\w.-]+:[\w.-]+:([\w.-]+) \(([^)]*)\) @ ([\w.-]+) ---`)
	reMojoFail = regexp.MustCompile(`Failed to execute goal [\w.-]+:[\w.-]+:[\w.-]+:([\w.-]+) \(([^)]*)\) on project ([\w.-]+)`)
)

// maxMojos bounds the goal sections remembered per file.
const maxMojos = 4096

// Gradle ends a failed build with its account of the failure, between
// "* What went wrong:" and "* Try:": the failed task and the causes it
// nests, or a problem that failed no task (the configuration cache's, a
// plugin's). Its lines are reports, with or without a failure word.
const (
	wrongStart = "* What went wrong:"
	wrongEnd   = "* Try:"
	maxWrong   = 40 // lines of an account without its "* Try:"
)

// Gradle prints a header for each task it runs, "> Task :core:compileKotlin",
// and marks the one that failed, "> Task :core:compileKotlin FAILED": the
// task's output is printed under its header, or before a FAILED header that
// repeats it (the compiler's "e: …" lines, then the header). So the lines
// between the task headers around a FAILED one are the failed task's output,
// up to maxTaskOutput lines back. The build's verdict ("FAILURE: Build
// failed with an exception.", "BUILD FAILED in 2m") ends the task headers.
const maxTaskOutput = 200

// gradleTaskHeader reports whether msg is a Gradle task header; the "> "
// may have been read as the line's header.
func gradleTaskHeader(msg string) bool {
	return strings.HasPrefix(strings.TrimPrefix(msg, "> "), "Task :")
}

// reHunk reads a unified diff's hunk header: the old and new line counts.
var reHunk = regexp.MustCompile(`^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@`)

// maxHunk bounds the lines a hunk region may cover.
const maxHunk = 400

// After a job's script GitLab's runner runs the after_script and then its
// own stages, whose headers are fixed phrases: the cache and the artifacts
// are saved whatever the script did, and their warnings ("no matching
// files", "Retrying...") are not why the job failed. The job's exit status
// is reported only after them, so the step that failed ends where the
// runner moved on. Jenkins's declarative post actions follow its steps
// the same way.
//
// Before the script it prepares the executor, fetches the sources and
// restores the cache and artifacts; once the script has started, those
// stages went well enough, and a "Failed to extract cache" in them is not
// why the job failed either.
//
// Bitbucket Pipelines collects test reports after the script, before the
// after-script, and reports no exit status; when the step defines caches
// it says the step failed by skipping their upload.
var (
	afterScript     = "Running after_script"
	jenkinsPost     = "[Pipeline] { (Declarative: Post Actions)"
	runnerStages    = [...]string{"Saving cache for ", "Uploading artifacts for ", "Cleaning up project directory", "Cleaning up file based variables", "Searching for test report files in directories named "}
	bitbucketFailed = [...]string{"Skipping cache upload for failed step", "Skipping artifacts upload for failed step"}
	setupStages     = [...]string{"Preparing the ", "Preparing environment", "Getting source from ", "Restoring cache", "Downloading artifacts"}
	scriptStage     = "Executing \""
)

// stepEchoes are the prefixes CI runners echo a command with, at the start
// of the message: GitHub Actions "##[group]Run ", Travis and GitLab "$ ",
// Jenkins's shell steps "[Pipeline] sh" (its other "[Pipeline]" lines are
// the pipeline's structure: stepPipe), and within a step set -x "+ "
// and npm scripts "> ". The last two start a step only where none is open,
// since output can start so too (a diff's "+ added", a quoted "> line").
// Indented, none is an echo ("    > 23 | expect(x)" in a code frame).
// CircleCI prints each run step's shell before its command,
// "#!/bin/bash -eo pipefail".
// Azure Pipelines starts each task with "##[section]Starting: <task>".
var stepEchoes = [...]string{"##[group]Run ", "$ ", "[Pipeline] sh", "[Pipeline] bat", "[Pipeline] powershell", "[Pipeline] pwsh", "#!/bin/bash -eo pipefail", "#!/bin/sh -eo pipefail", "##[section]Starting: ", "+ ", "> "}

// strongEchoes is how many of stepEchoes always start a step.
const strongEchoes = 9

// jenkinsStep is the prefix of a Jenkins pipeline's lines.
const jenkinsStep = "[Pipeline] "

// reStepExit reads a runner's report of a command's exit status: Travis's
// `The command "x" exited with 2.`, GitHub's "Process completed with exit
// code 1.", GitLab's "Job failed: exit code 1" (on Kubernetes "Job failed:
// command terminated with exit code 1"), Jenkins's "script returned exit
// code 2", CircleCI's "Exited with code exit status 2". A retry notice
// ("failed. Retrying, 2 of 3.") ends no step; nor does a whole build's
// verdict ("Your build exited with 1"). AWS CodeBuild reports "Command did
// not exit successfully <command> exit status 1"; Azure Pipelines' tasks
// "Bash exited with code '1'.", "Script failed with exit code: 1" and, as
// GitHub's actions do, "##[error]The process '/usr/bin/git' failed with
// exit code 128" (without "##[error]" an action reports a try it retries);
// Xcode Cloud "Command exited with non-zero exit-code: 65".
var reStepExit = regexp.MustCompile(`(?:The command ".*" (?:failed and )?exited with|Command did not exit successfully .* exit status|Process completed with exit code|Job failed: (?:command terminated with )?exit (?:code|status)|script returned exit code|Exited with code (?:exit status )?|(?:Bash|PowerShell|Cmd|Cmd\.exe) exited with code '|Script failed with exit code:|##\[error\](?:Error: )?The process '[^']*' failed with exit code|Command exited with non-zero exit-code:) ?(\d+)`)

// act (nektos/act, and the Gitea and Forgejo runners built on it) marks a
// step's start with "⭐ Run Main <step>" and its end with "✅  Success -
// Main <step>" or "❌  Failure - Main <step>" (indented, and in act's own
// output behind the job's "[workflow/job] "); the failure is followed by
// "exitcode '1': failure".
const (
	actRun     = "⭐ Run "
	actSuccess = "✅  Success - "
	actFailure = "❌  Failure - "
)

// actMarker returns msg's act step marker (actRun, actSuccess or
// actFailure), or "".
func actMarker(msg string) string {
	if msg == "" || msg[0] != ' ' && msg[0] != '[' && msg[0] != "⭐"[0] && msg[0] != "✅"[0] {
		return ""
	}
	m := strings.TrimLeft(msg, " ")
	if strings.HasPrefix(m, "[") {
		i := strings.Index(m, "] ")
		if i < 0 || strings.IndexByte(m[:i], ' ') >= 0 {
			return ""
		}
		m = strings.TrimLeft(m[i+2:], " ")
	}
	for _, p := range [...]string{actRun, actSuccess, actFailure} {
		if strings.HasPrefix(m, p) {
			return p
		}
	}
	return ""
}

// codeBuildRun reports whether msg is AWS CodeBuild's echo of a command,
// "[Container] 2024/06/25 13:06:13.62 Running command bun test".
func codeBuildRun(msg string) bool {
	const p = "[Container] "
	if !strings.HasPrefix(msg, p) {
		return false
	}
	i := strings.Index(msg, " Running command ")
	return i > len(p) && i <= len(p)+32 && strings.IndexFunc(msg[len(p):i], unicode.IsLetter) < 0
}

// stepLine classifies a message by its first bytes, once per template.
func stepLine(msg string) uint8 {
	if codeBuildRun(msg) {
		return stepEcho
	}
	switch actMarker(msg) {
	case actRun:
		return stepEcho
	case actSuccess, actFailure:
		return stepEnd
	}
	for _, p := range stepEchoes {
		if echoedWith(msg, p) {
			return stepEcho
		}
	}
	if strings.Contains(msg, "exit") && reStepExit.MatchString(msg) {
		return stepEnd
	}
	for _, p := range bitbucketFailed {
		if strings.HasPrefix(msg, p) {
			return stepEnd
		}
	}
	if strings.HasPrefix(msg, afterScript) || strings.HasPrefix(msg, jenkinsPost) {
		return stepAfter
	}
	if strings.HasPrefix(msg, jenkinsStep) {
		return stepPipe
	}
	if k, _ := testLine(msg); k != testNone {
		return stepTest
	}
	if strings.HasPrefix(msg, "@@ -") && reHunk.MatchString(msg) {
		return stepHunk
	}
	if msg == "##[endgroup]" {
		return stepGroupEnd
	}
	if msg == azureScript {
		return stepScriptIn
	}
	if strings.HasPrefix(msg, "=") && strings.Contains(msg, " "+azureOutput+" ") {
		return stepScriptOut
	}
	if strings.HasSuffix(msg, wrongStart) || strings.HasSuffix(msg, wrongEnd) {
		return stepWrong
	}
	if strings.Contains(msg, "--- ") && reMojo.MatchString(msg) || strings.Contains(msg, "Reactor Summary") {
		return stepMojo
	}
	if strings.Contains(msg, "Failed to execute goal ") && reMojoFail.MatchString(msg) {
		return stepMojoFail
	}
	if gradleTaskHeader(msg) || strings.HasPrefix(msg, "FAILURE: ") || strings.HasPrefix(msg, "BUILD FAILED") {
		return stepTask
	}
	for _, p := range runnerStages {
		if strings.HasPrefix(msg, p) {
			return stepRunner
		}
	}
	for _, p := range setupStages {
		if strings.HasPrefix(msg, p) {
			return stepSetup
		}
	}
	if strings.HasPrefix(msg, scriptStage) && strings.HasSuffix(msg, " stage of the job script") {
		return stepScript
	}
	return stepNone
}

// stepTail is how many lines before a failed step's exit report count as
// its last output.
const stepTail = 10

// maxSteps bounds the regions kept per file.
const maxSteps = 64

// stepTrack holds a file's step regions: from an echoed command's line to
// the line reporting its exit status, both included, or to the last line
// before the runner moved on to its after-script or its own stages; and
// the runner's own stages: those after the script, from the first to the
// exit report, and those before a script that started.
type stepTrack struct {
	start int  // the last echoed command's line; 0 none since the last exit
	echo  int  // the last echoed command's line of any kind
	end   int  // where the open step's output ended (0: not yet)
	post  bool // the runner is past the job's steps (after_script, post actions)
	// the last echoed command and error line when the runner went past
	// the job's steps
	postEcho, postErr int
	shell             bool // the open step is a Jenkins shell step
	// lastErr is the file's last error line so far (set by the engine);
	// shells are the Jenkins shell steps that printed an error, most
	// recent last
	lastErr int
	shells  [][2]int
	group   bool // the open step's echo is a GitHub Actions group not yet ended
	stages  int  // the first runner stage since the last exit; 0 none
	setup   int  // the first set-up stage not yet followed by the script; 0 none
	// Gradle: the last task header's line, and the start of the output of
	// a task whose FAILED header came and whose output has not ended yet
	// (0 none)
	task, taskFailed int
	failed           [][2]int
	passed           [][2]int
	runner           [][2]int
	tasks            [][2]int // the output of Gradle tasks that failed
	wrong            [][2]int // Gradle's accounts of what went wrong

	// Test cases, from a test runner's start line to its result line.
	tests      map[string]int // open named tests (go test, googletest, surefire): name -> start
	unit       int            // an open unittest test's start line; 0 none
	running    string         // the last surefire test class started
	testPassed [][2]int
	testFailed [][2]int

	// Maven: the open goal section's key and first line, and the closed
	// sections by key
	mojo      string
	mojoStart int
	mojos     map[string][2]int

	// Unified diff hunks (a formatter's --diff, git diff --exit-code):
	// their lines are code, not reports. A hunk covers at least as many
	// lines as the larger of its counts; that many are marked.
	hunks [][2]int

	// Scripts the runner echoed (see azureScript): the open one's first
	// line (0 none), and those closed
	script  int
	scripts [][2]int
}

// closeScript ends, at line last, the echoed script still open.
func (t *stepTrack) closeScript(last int) {
	if t.script != 0 && last >= t.script && len(t.scripts) < maxSteps*4 {
		t.scripts = append(t.scripts, [2]int{t.script, min(last, t.script+maxScript-1)})
	}
	t.script = 0
}

// line takes an event head whose template is a step line.
func (t *stepTrack) line(msg string, no int) {
	switch stepLine(msg) {
	case stepEcho:
		t.echo = no
		t.script = 0
		if strings.HasPrefix(msg, "##[group]Run ") {
			t.script = no + 1
		}
		strong := actMarker(msg) == actRun || codeBuildRun(msg)
		for _, p := range stepEchoes[:strongEchoes] {
			strong = strong || strings.HasPrefix(msg, p)
		}
		// An after-script's commands do not decide the job's status.
		if (strong || t.start == 0) && !t.post && (strong || t.end == 0) {
			t.start, t.end = no, 0
			t.shell = strings.HasPrefix(msg, jenkinsStep)
			t.group = strings.HasPrefix(msg, "##[group]Run ")
		}
	case stepGroupEnd:
		// GitHub Actions echoes a step's script, shell and env inside
		// the group; its output starts after it.
		if t.group && t.start != 0 && t.end == 0 {
			t.start = no + 1
		}
		t.group = false
		t.closeScript(no - 1)
	case stepScriptIn:
		t.script = no + 1
	case stepScriptOut:
		if t.script != 0 && t.start != 0 && t.end == 0 {
			t.start = no + 1 // the task's output starts here
		}
		t.closeScript(no - 1)
	case stepPipe:
		if t.shell && t.start != 0 && t.end == 0 {
			t.end = no - 1
			if t.lastErr >= t.start && len(t.shells) < maxSteps {
				t.shells = append(t.shells, [2]int{t.start, t.end})
			}
		}
	case stepAfter, stepRunner:
		if t.start != 0 && t.end == 0 {
			t.end = no - 1
		}
		if !t.post {
			t.postEcho, t.postErr = t.echo, t.lastErr
		}
		t.post = true
		if stepLine(msg) == stepRunner && t.stages == 0 {
			t.stages = no
		}
	case stepTask:
		t.finish(no - 1)
		prev := t.task
		t.task = 0
		if gradleTaskHeader(msg) {
			if strings.HasSuffix(strings.TrimRight(msg, " "), " FAILED") {
				t.taskFailed = no // no header before it: only what follows
				if prev != 0 {
					t.taskFailed = max(prev+1, no-maxTaskOutput)
				}
			}
			t.task = no
		}
	case stepWrong:
		if strings.HasSuffix(msg, wrongStart) {
			if len(t.wrong) < maxSteps {
				t.wrong = append(t.wrong, [2]int{no + 1, no + maxWrong})
			}
		} else if n := len(t.wrong); n > 0 && t.wrong[n-1][1] >= no {
			t.wrong[n-1][1] = no - 1
		}
	case stepMojo:
		t.closeMojo(no - 1)
		if m := reMojo.FindStringSubmatch(msg); m != nil {
			t.mojo, t.mojoStart = m[1]+" ("+m[2]+") @ "+m[3], no+1
		}
	case stepMojoFail:
		t.closeMojo(no - 1)
		m := reMojoFail.FindStringSubmatch(msg)
		if r, ok := t.mojos[m[1]+" ("+m[2]+") @ "+m[3]]; ok && len(t.failed) < maxSteps {
			if r[1]-r[0] >= maxTaskOutput {
				r[0] = r[1] - maxTaskOutput + 1
			}
			t.failed = append(t.failed, r)
		}
	case stepTest:
		t.test(msg, no)
	case stepHunk:
		m := reHunk.FindStringSubmatch(msg)
		n := 1
		for _, c := range m[1:] {
			if c == "" {
				continue
			}
			if v, err := strconv.Atoi(c); err == nil && v > n {
				n = v
			}
		}
		if len(t.hunks) < maxSteps*16 {
			t.hunks = append(t.hunks, [2]int{no + 1, no + min(n, maxHunk)})
		}
	case stepSetup:
		if t.setup == 0 {
			t.setup = no
		}
	case stepScript:
		if t.setup != 0 && len(t.runner) < maxSteps {
			t.runner = append(t.runner, [2]int{t.setup, no - 1})
		}
		t.setup = 0
	case stepEnd:
		m := reStepExit.FindStringSubmatch(msg)
		switch actMarker(msg) {
		case actSuccess:
			m = []string{msg, "0"}
		case actFailure:
			m = []string{msg, "1"}
		}
		bitbucket := false
		for _, p := range bitbucketFailed {
			if strings.HasPrefix(msg, p) {
				m, bitbucket = []string{msg, "1"}, true
			}
		}
		if m == nil {
			return
		}
		if t.stages != 0 && len(t.runner) < maxSteps {
			t.runner = append(t.runner, [2]int{t.stages, no})
		}
		if t.start != 0 {
			code, _ := strconv.Atoi(m[1])
			r := [2]int{t.start, no}
			if t.end != 0 {
				r[1] = t.end
			}
			if bitbucket && t.post && t.postEcho >= t.start {
				// the script stopped at its last command: that one failed
				r[0] = t.postEcho
			}
			if code != 0 && t.shell && (t.lastErr < r[0] || t.lastErr > r[1]) && len(t.shells) > 0 {
				// Jenkins reports the failed shell step's status at the
				// end of the build, after the clean-up steps that still
				// ran (a finally block, a container's removal): a last
				// step that printed no error is one of those, and the
				// failed step is the last one that printed an error.
				r = t.shells[len(t.shells)-1]
			}
			if code != 0 && len(t.failed) < maxSteps {
				t.failed = append(t.failed, r)
			} else if code == 0 && len(t.passed) < maxSteps {
				t.passed = append(t.passed, r)
			}
		}
		t.start, t.end, t.stages, t.post, t.shell = 0, 0, 0, false, false
		t.shells = t.shells[:0]
	}
}

// closeMojo ends, at line last, the open Maven goal section.
func (t *stepTrack) closeMojo(last int) {
	if t.mojo != "" && last >= t.mojoStart {
		if t.mojos == nil {
			t.mojos = map[string][2]int{}
		}
		if len(t.mojos) < maxMojos {
			t.mojos[t.mojo] = [2]int{t.mojoStart, last}
		}
	}
	t.mojo = ""
}

// finish ends, at line last, the output of a failed Gradle task still
// open.
func (t *stepTrack) finish(last int) {
	if t.taskFailed != 0 && last >= t.taskFailed && len(t.tasks) < maxSteps {
		t.tasks = append(t.tasks, [2]int{t.taskFailed, last})
	}
	t.taskFailed = 0
}

// close closes the file's regions at its last line. A job's script stops at
// its first failing command, and runners that print no exit status
// (Bitbucket Pipelines, Drone, a shell's set -x) end the log with it: when
// no step was seen failing, no exit status was reported since the last
// echoed command, and the file's last error (lastErr) came after that
// command, its output to the end is the step that failed.
//
// Past the job's steps (a runner's own stage, an after-script), the
// command and the error that count are the last before it: the
// after-script's commands and errors do not decide the job's status, and
// the runner's stages with no exit report run to the end.
func (t *stepTrack) close(last, lastErr int) {
	t.finish(last)
	if t.stages != 0 && len(t.runner) < maxSteps {
		t.runner = append(t.runner, [2]int{t.stages, last})
	}
	echo := t.echo
	if t.post {
		echo, lastErr = t.postEcho, t.postErr
	}
	if len(t.failed) > 0 || len(t.tasks) > 0 || t.start == 0 || echo < t.start || lastErr <= echo {
		return
	}
	r := [2]int{echo, last}
	if t.end != 0 {
		r[1] = t.end
	}
	if lastErr <= r[1] {
		t.failed = append(t.failed, r)
	}
}

// maxOpenTests bounds the named tests a file may hold open.
const maxOpenTests = 1024

// test takes a test runner's start or result line.
func (t *stepTrack) test(msg string, no int) {
	kind, name := testLine(msg)
	switch kind {
	case testStart:
		if t.tests == nil {
			t.tests = map[string]int{}
		}
		if len(t.tests) < maxOpenTests {
			t.tests[name] = no
		}
	case testRetryFail:
		if _, open := t.tests[name]; !open && len(t.tests) < maxOpenTests {
			if t.tests == nil {
				t.tests = map[string]int{}
			}
			t.tests[name] = no // from its first failed try
		}
	case testUnitStart:
		t.unit = no
	case testClassStart:
		if t.tests == nil {
			t.tests = map[string]int{}
		}
		if len(t.tests) < maxOpenTests {
			t.tests[name] = no
			t.running = name
		}
	case testPass, testFail:
		if name == "" && strings.Contains(msg, "Tests run:") {
			name = t.running // surefire 2 does not repeat the class
		}
		start, ok := t.tests[name]
		if ok {
			delete(t.tests, name)
		} else if name == "" && t.unit != 0 {
			start, ok = t.unit, true
			t.unit = 0
		}
		if !ok || start == no {
			return
		}
		r := [2]int{start, no}
		if kind == testPass && len(t.testPassed) < maxSteps*16 {
			t.testPassed = append(t.testPassed, r)
		} else if kind == testFail && len(t.testFailed) < maxSteps*16 {
			t.testFailed = append(t.testFailed, r)
		}
	}
}

// testLine kinds.
const (
	testNone = iota
	testStart
	testUnitStart
	testPass
	testFail
	testClassStart
	testRetryFail // a try of a test that its runner will try again
)

// cargo-nextest retries a failed test and prints each try's result,
// "TRY 1 FAIL [   0.412s] crate tests::name" (its output follows) and
// "TRY 2 PASS [   0.388s] crate tests::name": from the first failed try to
// the one that passed, the output is a flaky test's, which did not fail
// the run.
var reRetryTry = regexp.MustCompile(`^TRY \d+ +([A-Z]+) +\[[^\]]*\] +(\S.*)$`)

// testLine reads a test runner's line for a test starting or ending, and
// the test's name: go test's "=== RUN   TestX/sub" and "--- PASS: TestX
// (0.01s)" / "--- FAIL: …", googletest's "[ RUN      ] Suite.Name" and
// "[       OK ] Suite.Name (0 ms)" / "[  FAILED  ] …", Maven surefire's
// test classes (see reSurefire), and unittest's
// "test_x (mod.Class) ... " whose result ("ok", "FAIL", "ERROR") comes on a
// later line, after the test's output (name ""). Output between a test's
// start and its result is that test's.
func testLine(msg string) (int, string) {
	m := strings.TrimLeft(msg, " \t")
	for _, tag := range [...]string{"[INFO] ", "[ERROR] ", "[WARNING] "} { // Maven's levels
		m = strings.TrimPrefix(m, tag)
	}
	field := func(rest string) string {
		f := strings.Fields(rest)
		if len(f) == 0 {
			return ""
		}
		return f[0]
	}
	for _, tm := range testMarks {
		if rest, ok := strings.CutPrefix(m, tm.prefix); ok {
			return tm.kind, field(rest)
		}
	}
	m = strings.TrimRight(m, " \t")
	if name, ev, ok := gradleTestEvent(m); ok {
		switch ev {
		case "STANDARD_OUT", "STANDARD_ERROR":
			return testStart, name
		case "PASSED", "SKIPPED":
			return testPass, name
		case "FAILED":
			return testFail, name
		}
	}
	if strings.HasPrefix(m, "TRY ") {
		if sm := reRetryTry.FindStringSubmatch(strings.TrimRight(m, " \t")); sm != nil {
			if sm[1] == "PASS" {
				return testPass, sm[2]
			}
			return testRetryFail, sm[2]
		}
	}
	if rest, ok := strings.CutPrefix(m, "Running "); ok && reJavaClass.MatchString(rest) {
		return testClassStart, rest
	}
	if sm := reSurefire.FindStringSubmatch(m); sm != nil {
		kind := testPass
		if sm[1] != "0" || sm[2] != "0" || strings.Contains(m, "FAILURE") {
			kind = testFail
		}
		return kind, sm[3]
	}
	switch m {
	case "ok":
		return testPass, ""
	case "FAIL", "ERROR":
		return testFail, ""
	}
	if loc := reUnitStart.FindStringIndex(m); loc != nil {
		// The result may follow on the same line, or the test's own
		// output may start there.
		switch rest := strings.TrimSpace(m[loc[1]:]); {
		case rest == "ok" || rest == "FAIL" || rest == "ERROR" || strings.HasPrefix(rest, "skipped") || rest == "expected failure":
			return testNone, ""
		}
		return testUnitStart, ""
	}
	return testNone, ""
}

// gradleTestEvent reads Gradle's test events: "com.acme.SyncTest > retries()
// STANDARD_ERROR" opens the test's captured output, "… PASSED", "… FAILED"
// and "… SKIPPED" give its result; the name is the part before the event.
func gradleTestEvent(m string) (name, ev string, ok bool) {
	sp := strings.LastIndexByte(m, ' ')
	if sp < 0 || !strings.Contains(m[:sp], " > ") {
		return "", "", false
	}
	switch ev = m[sp+1:]; ev {
	case "STANDARD_OUT", "STANDARD_ERROR", "PASSED", "SKIPPED", "FAILED":
		return m[:sp], ev, true
	}
	return "", "", false
}

// testMarks are the named start and result lines of go test and
// googletest; the test's name follows the mark.
var testMarks = [...]struct {
	prefix string
	kind   int
}{
	{"=== RUN ", testStart}, {"--- PASS: ", testPass}, {"--- FAIL: ", testFail},
	{"[ RUN      ] ", testStart}, {"[       OK ] ", testPass}, {"[  FAILED  ] ", testFail},
}

// Maven surefire's lines for a test class: "Running com.acme.CartTest",
// then "Tests run: 5, Failures: 1, Errors: 0, Skipped: 0, Time elapsed:
// 0.2 s <<< FAILURE! - in com.acme.CartTest" (surefire 3; surefire 2 ends
// after the time). The run's summary has no time and closes nothing.
var (
	reJavaClass = regexp.MustCompile(`^[a-z][\w$]*(\.[\w$]+)+$`)
	reSurefire  = regexp.MustCompile(`^Tests run: \d+, Failures: (\d+), Errors: (\d+), Skipped: \d+, Time elapsed: [^-]*(?:- in (\S+))?`)
)

// reUnitStart matches the start of unittest's verbose line for a test:
// "test_reconnect (tests.test_ws.ReconnectTests) ... ".
var reUnitStart = regexp.MustCompile(`^[A-Za-z_]\w* \([\w.]+\) \.\.\.( |$)`)

// testOf returns the smallest test region holding line no (a subtest's
// inside its parent's; where regions overlap without nesting, as go test's
// deferred results make them, the tighter one) and whether that test passed.
func (t *stepTrack) testOf(no int) (r [2]int, passed, ok bool) {
	for i, rs := range [2][][2]int{t.testPassed, t.testFailed} {
		for _, x := range rs {
			if no >= x[0] && no <= x[1] && (!ok || x[1]-x[0] < r[1]-r[0]) {
				r, passed, ok = x, i == 0, true
			}
		}
	}
	return r, passed, ok
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
