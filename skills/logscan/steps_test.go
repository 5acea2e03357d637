package logscan

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// trackLines feeds lines (indexed by line number, "" for none) to a
// stepTrack as the engine does: the event heads whose template is a step
// line.
func trackLines(lines []string) *stepTrack {
	var st stepTrack
	for no, l := range lines {
		if l != "" && stepLine(l) != stepNone {
			st.line(l, no)
		}
	}
	return &st
}

// TestStepRegions feeds step lines as the engine does (event heads whose
// template is a step line) and checks the regions found.
func TestStepRegions(t *testing.T) {
	lines := []string{
		1:  "$ go mod download",
		2:  `The command "go mod download" failed. Retrying, 2 of 3.`, // a retry ends no step
		3:  `The command "go mod download" exited with 0.`,
		4:  "##[group]Run npm test",
		5:  "> app@1.0.0 test", // weak echo inside an open step
		6:  "    > 23 |   expect(x).toBe(1)",
		7:  "+ added line of a diff",
		8:  "##[error]Process completed with exit code 1.",
		9:  "Done. Your build exited with 1.", // a build's verdict, no step
		10: "+ make check",                    // weak echo opens a step when none is open
		11: "script returned exit code 2",
	}
	st := trackLines(lines)
	got := fmt.Sprint(st.failed, st.passed)
	if want := "[[4 8] [10 11]] [[1 3]]"; got != want {
		t.Fatalf("failed, passed regions %s, want %s", got, want)
	}
}

// TestFailedStepRanking: a vet diagnostic with no failure word in the
// step that failed is evidence, and an error a passing step printed (a
// test logging it on purpose) is marked down as such.
func TestFailedStepRanking(t *testing.T) {
	var b strings.Builder
	b.WriteString("$ go test ./...\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "=== RUN   TestCase%d\n--- PASS: TestCase%d (0.00s)\n", i, i)
	}
	b.WriteString("    client_test.go:52: error: dial tcp: i/o timeout (expected)\n")
	b.WriteString("ok  \texample.com/app\t0.412s\n")
	b.WriteString(`The command "go test ./..." exited with 0.` + "\n")
	b.WriteString("$ go vet ./...\n")
	b.WriteString("# example.com/app/proxy\n")
	b.WriteString("proxy/dial.go:88:3: Errorf format %d has arg addr of wrong type string\n")
	b.WriteString(`The command "go vet ./..." exited with 1.` + "\n")
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&b, "uploading cache part %d\n", i)
	}
	rep := analyzeText(t, "travis.log", b.String(), 5)
	if rankOf(rep, "", 87) == 0 {
		t.Fatalf("the vet diagnostic (L87) is not in the top 5: %+v", rep.Evidence)
	}
	for _, e := range rep.Evidence {
		if e.Line == 82 && !strings.Contains(e.Reason, "printed by a step that passed at L84") {
			t.Errorf("L82 reason %q: not marked as printed by the passing step", e.Reason)
		}
	}
}

// TestRunnerStages: GitLab's runner stages around the job's script. The
// step that failed ends where the runner moved on to the after-script
// (whose commands do not decide the job's status); the runner's own
// stages, after the script and before a script that started, are marked.
func TestRunnerStages(t *testing.T) {
	lines := []string{
		1:  `Preparing the "docker" executor`,
		2:  "Restoring cache",
		3:  "Failed to extract cache",
		4:  `Executing "step_script" stage of the job script`,
		5:  "$ make build",
		6:  "./routes.go:58:26: undefined: handleRefund",
		7:  "Running after_script",
		8:  "$ go clean -cache",
		9:  "Saving cache for failed job",
		10: "Uploading artifacts for failed job",
		11: "Cleaning up project directory and file based variables",
		12: "ERROR: Job failed: exit code 2",
	}
	st := trackLines(lines)
	got := fmt.Sprint(st.failed, st.passed, st.runner)
	if want := "[[5 6]] [] [[1 3] [9 12]]"; got != want {
		t.Fatalf("failed, passed, runner regions %s, want %s", got, want)
	}
}

// TestJenkinsShellSteps: a Jenkins pipeline's shell step runs from
// "[Pipeline] sh" to its next structure line; post actions start none;
// the exit report at the end closes the last shell step that ran.
func TestJenkinsShellSteps(t *testing.T) {
	lines := []string{
		1:  "[Pipeline] sh",
		2:  "+ make",
		3:  "[Pipeline] }",
		4:  "[Pipeline] sh",
		5:  "+ bundle install",
		6:  "Could not find nokogiri-1.13.10 in any of the sources",
		7:  "[Pipeline] }",
		8:  "[Pipeline] { (Declarative: Post Actions)",
		9:  "[Pipeline] sh",
		10: "[Pipeline] End of Pipeline",
		11: "ERROR: script returned exit code 7",
	}
	st := trackLines(lines)
	if got, want := fmt.Sprint(st.failed, st.passed), "[[4 6]] []"; got != want {
		t.Fatalf("failed, passed regions %s, want %s", got, want)
	}
}

// TestJenkinsCleanupStep: Jenkins reports a failed shell step's exit
// status at the end of the build, after clean-up steps that still ran;
// the failed step is the last one that printed an error, not the
// clean-up that printed none.
func TestJenkinsCleanupStep(t *testing.T) {
	lines := []string{
		1:  "[Pipeline] sh",
		2:  "+ bin/rails db:migrate",
		3:  "PG::UndefinedColumn: ERROR:  column accounts.currency does not exist",
		4:  "[Pipeline] }",
		5:  "[Pipeline] sh",
		6:  "+ docker rm -f 3f8c1b7e2d9a",
		7:  "[Pipeline] }",
		8:  "[Pipeline] End of Pipeline",
		9:  "ERROR: script returned exit code 1",
		10: "[Pipeline] sh",
		11: "+ make lint",
		12: "[Pipeline] }",
		13: "ERROR: script returned exit code 2",
	}
	errs := map[int]bool{3: true, 9: true}
	var st stepTrack
	for no, l := range lines {
		if l != "" && stepLine(l) != stepNone {
			st.line(l, no)
		}
		if errs[no] {
			st.lastErr = no
		}
	}
	// the second failure printed no error and no earlier step since the
	// first exit report did: its own step stands
	if got, want := fmt.Sprint(st.failed), "[[1 3] [10 11]]"; got != want {
		t.Fatalf("failed regions %s, want %s", got, want)
	}
}

// TestTestRegions: test runners' start and result lines give each test's
// region; a line belongs to the tightest region holding it.
func TestTestRegions(t *testing.T) {
	lines := []string{
		1:  "=== RUN   TestCache",
		2:  "    cache_test.go:12: miss logged as error on purpose",
		3:  "--- PASS: TestCache (0.01s)",
		4:  "=== RUN   TestParse",
		5:  "=== RUN   TestParse/negative",
		6:  "    parse_test.go:48: got 5m, want -5m",
		7:  "    --- FAIL: TestParse/negative (0.00s)",
		8:  "--- FAIL: TestParse (0.00s)",
		9:  "[ RUN      ] Parser.RejectsErrorToken",
		10: "[       OK ] Parser.RejectsErrorToken (0 ms)",
		11: "test_reconnect (tests.test_ws.ReconnectTests) ... ERROR:ws:unhandled exception",
		12: "RuntimeError: boom",
		13: "ok",
		14: "test_hangs (tests.test_ws.ReconnectTests) ... ok",
		15: "test_fails (tests.test_ws.ReconnectTests) ... ",
		16: "FAIL",
	}
	st := trackLines(lines)
	if got, want := fmt.Sprint(st.testPassed, st.testFailed), "[[1 3] [9 10] [11 13]] [[5 7] [4 8] [15 16]]"; got != want {
		t.Fatalf("passed, failed test regions %s, want %s", got, want)
	}
	for no, want := range map[int]string{2: "[1 3] true", 6: "[5 7] false", 12: "[11 13] true", 14: "[0 0] false"} {
		r, passed, _ := st.testOf(no)
		if got := fmt.Sprint(r, passed); got != want {
			t.Errorf("testOf(%d) = %s, want %s", no, got, want)
		}
	}
}

// TestSurefireRegions: Maven surefire's test classes, in its version 2
// and 3 shapes; the run's summary closes nothing.
func TestSurefireRegions(t *testing.T) {
	lines := []string{
		1: "Running com.acme.billing.ErrorMapperTest",
		2: "16:02:31.212 [main] ERROR c.a.b.ErrorMapper - upstream call failed",
		3: "Tests run: 4, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.05 sec",
		4: "[INFO] Running com.acme.billing.InvoiceTest",
		5: "java.lang.AssertionError: expected:<3> but was:<2>",
		6: "[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.1 s <<< FAILURE! - in com.acme.billing.InvoiceTest",
		7: "Tests run: 7, Failures: 1, Errors: 0, Skipped: 0",
	}
	st := trackLines(lines)
	if got, want := fmt.Sprint(st.testPassed, st.testFailed), "[[1 3]] [[4 6]]"; got != want {
		t.Fatalf("passed, failed test regions %s, want %s", got, want)
	}
}

// TestHunksAndGradleTests: a unified diff's hunk covers at least the larger
// of its counts; Gradle's test events bound a test's captured output.
func TestHunksAndGradleTests(t *testing.T) {
	lines := []string{
		1:  "--- src/retry.py\t(original)",
		2:  "+++ src/retry.py\t(formatted)",
		3:  "@@ -18,7 +18,8 @@",
		4:  "     last_error: Exception | None = None",
		5:  "@@ -31 +32,2 @@",
		8:  "com.acme.SyncTest[jvm] > retries[jvm] STANDARD_ERROR",
		9:  "com.acme.SyncTest[jvm] > retries[jvm] PASSED",
		10: "com.acme.SyncTest[jvm] > merges[jvm] STANDARD_OUT",
		12: "com.acme.SyncTest[jvm] > merges[jvm] FAILED",
		13: "tests/test_api.py::test_error_mapping PASSED",
	}
	st := trackLines(lines)
	got := fmt.Sprint(st.hunks, st.testPassed, st.testFailed)
	if want := "[[4 11] [6 7]] [[8 9]] [[10 12]]"; got != want {
		t.Fatalf("hunks, passed, failed tests %s, want %s", got, want)
	}
}

// TestActionsGroupHeader: GitHub Actions echoes a step's script, shell and
// env inside its group; the step's output, and so the failed region,
// starts after "##[endgroup]".
func TestActionsGroupHeader(t *testing.T) {
	lines := []string{
		1: "##[group]Run go build -v ./...",
		2: "go build -v ./...",
		3: "shell: /usr/bin/bash -e {0}",
		4: "##[endgroup]",
		5: "go: updates to go.mod needed; to update it:",
		6: "##[error]Process completed with exit code 1.",
	}
	st := trackLines(lines)
	if got, want := fmt.Sprint(st.failed), "[[5 6]]"; got != want {
		t.Fatalf("failed regions %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(st.scripts), "[[2 3]]"; got != want {
		t.Fatalf("echoed scripts %s, want %s", got, want)
	}
}

// TestAzureTasks: Azure Pipelines' tasks, each from "##[section]Starting:"
// to its exit report; a script task's output starts after "Starting
// Command Output", and the script it echoes before is code.
func TestAzureTasks(t *testing.T) {
	lines := []string{
		1:  "##[section]Starting: Run docker build",
		2:  "Task         : Command line",
		3:  "Generating script.",
		4:  "Script contents:",
		5:  "./.scripts/run_docker_build.sh",
		6:  "========================== Starting Command Output ===========================",
		7:  "/usr/bin/bash --noprofile --norc /home/vsts/work/_temp/7f1b.sh",
		8:  "TESTS FAILED: quaylib-2.1.0.conda",
		9:  "##[error]Bash exited with code '1'.",
		10: "##[section]Finishing: Run docker build",
		11: "##[section]Starting: Prepare artifacts",
		12: "Script contents:",
		13: `if [[ "$AGENT_JOBSTATUS" == "Failed" ]]; then`,
		14: "fi",
		15: "========================== Starting Command Output ===========================",
		16: "Archiving the build directory failed: no such file",
		17: "##[section]Finishing: Prepare artifacts",
		18: "##[section]Starting: Publish",
		19: "##[error]Error: The process '/usr/bin/dotnet' failed with exit code 1",
		20: "##[section]Starting: Deploy",
		21: "##[error]Script failed with exit code: 2",
	}
	st := trackLines(lines)
	if got, want := fmt.Sprint(st.failed), "[[7 9] [18 19] [20 21]]"; got != want {
		t.Fatalf("failed regions %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(st.scripts), "[[5 5] [13 14]]"; got != want {
		t.Fatalf("echoed scripts %s, want %s", got, want)
	}
	// Xcode Cloud's report of its xcodebuild step
	if m := reStepExit.FindStringSubmatch("Command exited with non-zero exit-code: 65"); m == nil || m[1] != "65" {
		t.Errorf("Xcode Cloud's exit report not read: %v", m)
	}
}

// TestEchoedScriptRanking: a line of an echoed script that names a
// failure is not evidence; the task's output is.
func TestEchoedScriptRanking(t *testing.T) {
	var b strings.Builder
	b.WriteString("##[section]Starting: Build\nScript contents:\nmake all\n")
	b.WriteString("========================== Starting Command Output ===========================\n")
	for i := range 30 {
		fmt.Fprintf(&b, "cc -c src/part%d.c\n", i)
	}
	b.WriteString("src/io.c:41:7: error: 'buf' undeclared (first use in this function)\n")
	b.WriteString("##[error]Bash exited with code '2'.\n##[section]Finishing: Build\n")
	b.WriteString("##[section]Starting: Collect logs\nScript contents:\n")
	b.WriteString(`if [[ "$AGENT_JOBSTATUS" == "Failed" ]]; then echo "the build failed: collecting logs"; fi` + "\n")
	b.WriteString("========================== Starting Command Output ===========================\n")
	b.WriteString("collected 3 files\n##[section]Finishing: Collect logs\n")
	rep := analyzeText(t, "azure.log", b.String(), 5)
	if r := rankOf(rep, "", 35); r != 1 {
		t.Errorf("the compiler's error (L35) ranks %d, want 1: %+v", r, rep.Evidence)
	}
	if reason, ok := reasonOf(rep, 40); ok && !strings.Contains(reason, "a line of the script the runner echoed at L39") {
		t.Errorf("L40 reason %q: not marked as an echoed script line", reason)
	}
}

// TestGradleTaskRegions: a failed Gradle task's output is under its
// FAILED header (ktlint, detekt) or before it, after the previous task's
// header (the Kotlin compiler's "e:" lines); the build's verdict ends it.
func TestGradleTaskRegions(t *testing.T) {
	lines := []string{
		1:  "> Task :core:compileKotlin",
		2:  "e: file:///w/core/src/Invoice.kt:57:27 Unresolved reference: taxRate",
		3:  "> Task :core:compileKotlin FAILED",
		4:  "> Task :feature:lint",
		5:  "> Task :feature:ktlintMainSourceSetCheck FAILED",
		6:  "/w/feature/src/Geofence.kt:48:1 Unexpected indentation (16) (should be 12)",
		8:  "> Task :feature:detekt",
		9:  "> Task :app:check FAILED",
		10: "Task :app:lint FAILED", // a "> " the header detector took
		11: "/w/app/src/Main.kt:3:1 Imports must be ordered",
		12: "FAILURE: Build failed with an exception.",
		13: "> Task :tools:test FAILED",
	}
	st := trackLines(lines)
	st.finish(15)
	if got, want := fmt.Sprint(st.tasks), "[[2 3] [5 7] [9 9] [10 11] [13 15]]"; got != want {
		t.Fatalf("failed regions %s, want %s", got, want)
	}
}

// TestOpenStepAtEnd: with no exit status reported (Bitbucket, Drone,
// set -x), the last echoed command is the one that failed when the
// file's last error comes after it; not when a step was seen failing, an
// exit status closed the step, or the errors came before the command.
func TestOpenStepAtEnd(t *testing.T) {
	lines := []string{
		1: "+ yarn install --frozen-lockfile",
		3: "+ yarn lint",
		5: "+ yarn build",
		6: "$ next build",
	}
	for _, c := range []struct {
		last, lastErr int
		exit          bool
		want          string
	}{
		{20, 15, false, "[[6 20]]"},
		{20, 4, false, "[]"}, // the last error came before the last command
		{20, 15, true, "[]"}, // an exit status was reported
		{20, 0, false, "[]"}, // no error at all
	} {
		ls := append([]string(nil), lines...)
		if c.exit {
			ls = append(ls, make([]string, 10)...)
			ls[12] = "Process completed with exit code 0."
		}
		st := trackLines(ls)
		st.close(c.last, c.lastErr)
		if got := fmt.Sprint(st.failed); got != c.want {
			t.Errorf("%+v: failed regions %s, want %s", c, got, c.want)
		}
	}
}

// TestWarningUnderError: an indented warning under an error's head is a
// warning inside the event, not the event's error.
func TestWarningUnderError(t *testing.T) {
	text := "2024-06-01 10:00:00 ERROR [main] request failed\n" +
		"    WARN retry budget low\n" +
		"2024-06-01 10:00:01 INFO [main] next\n"
	g := newGrouper(strings.Split(strings.TrimSpace(text), "\n"))
	var keys []uint8
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		r := g.parse(l)
		g.group(&r)
		keys = append(keys, r.key)
	}
	if keys[1] != keyWarn {
		t.Fatalf("keys %v: the indented WARN line has key %d, want keyWarn (%d)", keys, keys[1], keyWarn)
	}
}

// TestCircleCISteps: CircleCI prints a run step's shell before its
// command and "Exited with code exit status N" after a failed one.
func TestCircleCISteps(t *testing.T) {
	lines := []string{
		1: "#!/bin/bash -eo pipefail",
		2: "mix format --check-formatted",
		3: "#!/bin/bash -eo pipefail",
		4: "mix dialyzer --format dialyxir",
		5: "lib/quayside/tariffs/calculator.ex:64:15:call",
		6: "Exited with code exit status 2",
	}
	st := trackLines(lines)
	if got, want := fmt.Sprint(st.failed), "[[3 6]]"; got != want {
		t.Fatalf("failed regions %s, want %s", got, want)
	}
	for in, want := range map[string]bool{
		"lib/quayside/tariffs/calculator.ex:64:15:call":            true, // dialyxir
		"src/Geofence.kt:48:1 Unexpected indentation":              true, // ktlint
		"  ✘  15 [chromium] › search/search.spec.ts:18:7 › search": false,
		"10:30:45:done": false,
	} {
		if got := reLocated.MatchString(in); got != want {
			t.Errorf("reLocated.MatchString(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestActSteps: act (and the Gitea and Forgejo runners) marks each step's
// start and end; the failed step's error outranks a passing step's and
// the bare exit status the tool printed after it.
func TestActSteps(t *testing.T) {
	lines := []string{
		1: "⭐ Run Main actions/checkout@v4",
		2: "Non-terminating error while running 'git clone': some refs were not fetched",
		3: "  ✅  Success - Main actions/checkout@v4",
		4: "[CI/deploy] ⭐ Run Main helmfile diff",
		5: "ERROR:",
		6: "  exit status 1",
		7: "  Error: Kubernetes cluster unreachable: the server has asked for the client to provide credentials",
		8: "[CI/deploy]   ❌  Failure - Main helmfile diff",
		9: "exitcode '1': failure",
	}
	st := trackLines(lines)
	if got, want := fmt.Sprint(st.failed, st.passed), "[[4 8]] [[1 3]]"; got != want {
		t.Fatalf("failed and passed regions %s, want %s", got, want)
	}
	var b strings.Builder
	for i, l := range lines[1:] {
		fmt.Fprintf(&b, "2024-06-21T07:12:%02d.0000000Z %s\n", i, l)
	}
	rep := analyzeText(t, "act.log", b.String(), 5)
	if len(rep.Evidence) == 0 || rep.Evidence[0].Line != 7 {
		t.Errorf("the failed step's error (L7) is not first: %+v", rep.Evidence)
	}
}

// TestCodeBuildSteps: AWS CodeBuild echoes each command and reports the
// one that failed; its phase verdicts are wrappers, and a --timeout flag
// in a command is no timeout.
func TestCodeBuildSteps(t *testing.T) {
	lines := []string{
		1: "[Container] 2024/06/25 13:06:13.62 Running command bunx tsc --noEmit",
		2: "[Container] 2024/06/25 13:06:14.10 Running command bun test --timeout 5000",
		3: "(pass) formatMoney > rejects NaN with an error [0.16ms]",
		4: "(fail) POST /webhooks/payments > retries ledger posting until acknowledged [5001.37ms]",
		5: "[Container] 2024/06/25 13:06:30.35 Command did not exit successfully bun test --timeout 5000 exit status 1",
		6: "[Container] 2024/06/25 13:06:30.37 Phase complete: BUILD State: FAILED",
		7: "[Container] 2024/06/25 13:06:30.37 Phase context status code: COMMAND_EXECUTION_ERROR Message: Error while executing command: bun test --timeout 5000. Reason: exit status 1",
	}
	st := trackLines(lines)
	if got, want := fmt.Sprint(st.failed), "[[2 5]]"; got != want {
		t.Fatalf("failed regions %s, want %s", got, want)
	}
	for _, l := range lines[5:] {
		if !reWrapper.MatchString(l) {
			t.Errorf("%q is a wrapper", l)
		}
	}
	if k := knownIssue(lines[7]); k != "" {
		t.Errorf("knownIssue(%q) = %q: a --timeout flag is no timeout", lines[7], k)
	}
	if k := knownIssue("java.net.SocketTimeoutException: Read timed out"); k != "timeout" {
		t.Errorf("a socket timeout is known as %q", k)
	}
	for _, q := range []string{"batch response: This repository is over its data quota.", "Error 403: Quota exceeded for quota metric 'Queries'",
		"Your account has insufficient quota"} {
		if k := knownIssue(q); k != "quota exceeded" {
			t.Errorf("knownIssue(%q) = %q, want quota exceeded", q, k)
		}
	}
	if k := knownIssue("the quota is 10 GiB"); k != "" {
		t.Errorf("a quota mentioned is known as %q", k)
	}
	rep := analyzeText(t, "codebuild.log", strings.Join(lines[1:], "\n")+"\n", 1)
	if len(rep.Evidence) == 0 || rep.Evidence[0].Line != 4 {
		t.Errorf("the failed test (L4) is not first: %+v", rep.Evidence)
	}
}

// TestMavenGoalSections: the goal Maven names in "Failed to execute goal"
// marks its section, under its header, as the failed step's output; a
// Bamboo task's verdict is a wrapper.
func TestMavenGoalSections(t *testing.T) {
	lines := []string{
		1:  "[INFO] --- surefire:3.2.5:test (default-test) @ ledger-fx ---",
		2:  "[ERROR] Run 1: RateFeedClientTest.retriesOn503UntilSuccess:88 expected: <200> but was: <503>",
		3:  "[INFO] --- jacoco:0.8.12:check (check-coverage) @ ledger-fx ---",
		4:  "[INFO] Analyzed bundle 'ledger-fx' with 23 classes",
		5:  "[WARNING] Rule violated for bundle ledger-fx: lines covered ratio is 0.74, but expected minimum is 0.80",
		6:  "[INFO] Reactor Summary for Ledger 4.7.0-SNAPSHOT:",
		7:  "[INFO] BUILD FAILURE",
		8:  "[ERROR] Failed to execute goal org.jacoco:jacoco-maven-plugin:0.8.12:check (check-coverage) on project ledger-fx: Coverage checks have not been met. See log above for details. -> [Help 1]",
		9:  "[ERROR] Re-run Maven using the -X switch to enable full debug logging.",
		10: "Finished task 'Maven verify' with result: Failed",
	}
	st := trackLines(lines)
	if got, want := fmt.Sprint(st.failed), "[[4 5]]"; got != want {
		t.Fatalf("failed regions %s, want %s", got, want)
	}
	if !reWrapper.MatchString(lines[10]) {
		t.Errorf("%q is a wrapper", lines[10])
	}
	rep := analyzeText(t, "maven.log", strings.Join(lines[1:], "\n")+"\n", 2)
	if _, ok := reasonOf(rep, 5); !ok {
		t.Errorf("the coverage rule (L5) is not in the top 2: %+v", rep.Evidence)
	}
}

// TestAnnouncedErrors: a short error line ending in ':' lends its level
// to the message printed on the next line, which carries no failure word
// of its own; a dependency tree's nodes and a closing bracket under an
// error level are not reports.
func TestAnnouncedErrors(t *testing.T) {
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, "web:build: transforming module %d of 412\n", i)
	}
	b.WriteString("web:build: x Build failed in 2.31s\n")
	b.WriteString("web:build: error during build:\n")
	b.WriteString(`web:build: src/cart/PriceTag.tsx (3:9): "formatCurrency" is not exported by "../shared/dist/index.mjs"` + "\n")
	b.WriteString("web:build: file: src/cart/PriceTag.tsx:3:9\n")
	b.WriteString("[ERROR] Require upper bound dependencies error for jackson-databind:2.15.4 paths to dependency are:\n")
	b.WriteString("[ERROR] +-com.acme:orders-service:1.8.0-SNAPSHOT\n")
	b.WriteString("[ERROR]   +-org.springframework.boot:spring-boot-starter-json:3.3.1\n")
	b.WriteString("[ERROR]     \\- com.fasterxml.jackson.core:jackson-databind:2.15.4\n")
	b.WriteString("[ERROR] ]\n")
	rep := analyzeText(t, "vite.log", b.String(), 20)
	rank := map[int]int{}
	var reason string
	for i, e := range rep.Evidence {
		rank[e.Line] = i + 1
		if e.Line == 23 {
			reason = e.Reason
		}
	}
	if rank[23] == 0 || !strings.Contains(reason, "announced at L22") {
		t.Errorf("the announced message (L23) ranks %d, reason %q; evidence %+v", rank[23], reason, rep.Evidence)
	}
	for _, no := range []int{26, 27, 28, 29} {
		if rank[no] != 0 && rank[no] < rank[25] {
			t.Errorf("L%d (tree node or bracket) ranks %d, above the error it lists (%d)", no, rank[no], rank[25])
		}
	}
	for msg, want := range map[string]bool{
		"error during build:":                        true,
		"Failed while enforcing. The error(s) are [": true,
		"Failed tests:":                              false, // a verdict: names follow
		"Error:":                                     true,  // the Serverless Framework's, its message below
		"from ../src/pcap_session.cc:3:":             false, // no failure named
		"error: this line is long and tells the whole story of what went wrong here:": false,
	} {
		if got := announcer(msg); got != want {
			t.Errorf("announcer(%q) = %v, want %v", msg, got, want)
		}
	}
	for msg, want := range map[string]bool{
		"+-org.springframework.boot:spring-boot-starter-json:3.3.1": true,
		"|  \\- com.fasterxml.jackson.core:jackson-databind:2.15.4": true,
		"│   └── lodash@4.17.21":                                    true,
		"|-- react@18.3.1":                                          true,
		"│ Error: creating RDS DB Instance":                         false, // terraform's box
		"+ make test":                                               false,
	} {
		if got := treeLine(msg); got != want {
			t.Errorf("treeLine(%q) = %v, want %v", msg, got, want)
		}
	}
}

// TestGradleAccount: Gradle's account of a failure, from "* What went
// wrong:" to "* Try:", reports it whatever its words; a configuration
// cache problem that failed no task is the cause, its nested "> " cause
// first; the "* Try:" hints and the verdicts around it are not.
func TestGradleAccount(t *testing.T) {
	lines := []string{
		1: "* What went wrong:",
		4: "* Try:",
		6: "* What went wrong:",
	}
	st := trackLines(lines)
	if got, want := fmt.Sprint(st.wrong), fmt.Sprintf("[[2 3] [7 %d]]", 6+maxWrong); got != want {
		t.Fatalf("accounts %s, want %s", got, want)
	}

	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "> Task :shared:compileTask%d\n", i)
	}
	b.WriteString(`
FAILURE: Build failed with an exception.

* What went wrong:
Configuration cache problems found in this build.

- Task ` + "`:shared:generateConfig`" + ` of type ` + "`GenerateConfigTask`" + `: invocation of 'Task.project' at execution time is unsupported.

See the complete report at file:///w/build/reports/configuration-cache/report.html
> Invocation of 'Task.project' by task ':shared:generateConfig' at execution time is unsupported.

* Try:
> Run with --stacktrace option to get the stack trace.
> Get more help at https://help.gradle.org.

BUILD FAILED in 7m 48s
`)
	rep := analyzeText(t, "gradle.log", b.String(), 5)
	if len(rep.Evidence) < 2 || !strings.HasPrefix(rep.Evidence[0].Text, "> Invocation of 'Task.project'") {
		t.Fatalf("evidence %+v, want the nested cause first", rep.Evidence)
	}
	causes := 0
	for i, e := range rep.Evidence {
		if strings.Contains(e.Text, "--stacktrace") || strings.Contains(e.Text, "complete report") || strings.HasPrefix(e.Text, "BUILD FAILED") {
			if causes < 2 {
				t.Errorf("#%d L%d %q (%s) ranks above the account's causes", i, e.Line, e.Text, e.Reason)
			}
		}
		if strings.Contains(strings.ToLower(e.Text), "invocation of 'task.project'") {
			causes++
			if !strings.Contains(e.Reason, "Gradle's account of what went wrong at L64") {
				t.Errorf("#%d L%d reason %q", i, e.Line, e.Reason)
			}
		}
	}
	if causes != 2 {
		t.Errorf("%d of the account's two causes in the top 5: %+v", causes, rep.Evidence)
	}
}

// TestRetriedTestPassed: cargo-nextest's tries of a flaky test, from the
// first that failed to the one that passed, are a test that passed; a
// test whose last try failed is left open (its region never closes).
func TestRetriedTestPassed(t *testing.T) {
	lines := []string{
		1: "  TRY 1 FAIL [   0.412s] net tests::reconnect_after_reset",
		2: "--- TRY 1 STDERR:        net tests::reconnect_after_reset ---",
		3: "thread 'tests::reconnect_after_reset' panicked at src/tests.rs:212:10:",
		4: "        PASS [   0.011s] store segment::tests::parse",
		5: "  TRY 2 FAIL [   0.399s] net tests::reconnect_after_reset",
		6: "  TRY 3 PASS [   0.388s] net tests::reconnect_after_reset",
		7: "  TRY 1 FAIL [   0.100s] net tests::always_fails",
		8: "  TRY 2 FAIL [   0.100s] net tests::always_fails",
	}
	st := trackLines(lines)
	if got, want := fmt.Sprint(st.testPassed), "[[1 6]]"; got != want {
		t.Errorf("passed %s, want %s", got, want)
	}
	if got := fmt.Sprint(st.testFailed); got != "[]" {
		t.Errorf("failed %s, want none", got)
	}
}

// TestReportRecordMessage: a finding printed as a JSON record has its
// severity and its message on lines of their own; the message is the
// finding's error.
func TestReportRecordMessage(t *testing.T) {
	for in, want := range map[string]bool{
		`      "message": "The executable requests the get-task-allow entitlement.",`: true, `  msg: disk full`: true,
		`"messages": 3`: false, `      "path": "Tally.app/Contents/MacOS/helper",`: false, `message`: false,
	} {
		if got := fieldKey(in, messageKeys); got != want {
			t.Errorf("fieldKey(%q, messageKeys) = %v, want %v", in, got, want)
		}
	}
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "2024-06-11T09:19:%02d.0000000Z Uploading chunk %d of 40\n", i, i)
	}
	b.WriteString(`2024-06-11T09:19:41.0000000Z {
2024-06-11T09:19:41.0000000Z   "status": "Invalid",
2024-06-11T09:19:41.0000000Z   "statusSummary": "Archive contains critical validation errors",
2024-06-11T09:19:41.0000000Z   "issues": [
2024-06-11T09:19:41.0000000Z     {
2024-06-11T09:19:41.0000000Z       "severity": "error",
2024-06-11T09:19:41.0000000Z       "code": null,
2024-06-11T09:19:41.0000000Z       "path": "Tally.zip/Tally.app/Contents/Resources/bin/tally-helper",
2024-06-11T09:19:41.0000000Z       "message": "The executable requests the com.apple.security.get-task-allow entitlement.",
2024-06-11T09:19:41.0000000Z       "docUrl": "https://developer.apple.com/documentation/security/resolving-common-notarization-issues"
2024-06-11T09:19:41.0000000Z     }
2024-06-11T09:19:41.0000000Z   ]
2024-06-11T09:19:41.0000000Z }
2024-06-11T09:19:42.0000000Z ##[error]Process completed with exit code 1.
`)
	rep := analyzeText(t, "notary.log", b.String(), 3)
	if why, ok := reasonOf(rep, 49); !ok || !strings.Contains(why, "announced at L46") {
		t.Errorf("the finding's message (L49) is not in the top 3 as the error L46 announced (%q): %+v", why, rep.Evidence)
	}
}

// TestDiffOfOutput: a test harness's expected-versus-actual diff
// (pg_regress's regression.diffs) shows what the program printed instead;
// an added report with its own level there is evidence, while an error
// word in a formatter's diff of code is not.
func TestDiffOfOutput(t *testing.T) {
	text := strings.Join([]string{
		"+ black --check --diff src",
		"--- src/retry.py\t(original)",
		"+++ src/retry.py\t(formatted)",
		"@@ -1,2 +1,2 @@",
		"-    raise RetryError('gave up after %d tries' % n)",
		"+    raise RetryError(\"gave up after %d tries\" % n)",
		"would reformat src/retry.py",
		"+ make installcheck",
		"diff -U3 /w/test/expected/setup.out /w/results/setup.out",
		"--- /w/test/expected/setup.out",
		"+++ /w/results/setup.out",
		"@@ -1,3 +1,3 @@",
		" CREATE EXTENSION tdigest;",
		"+ERROR:  extension \"tdigest\" has no installation script nor update path for version \"1.5.0\"",
		" SELECT 1;",
		"not ok 1     - setup                                      14 ms",
		"make: *** [installcheck] Error 1",
	}, "\n") + "\n"
	rep := analyzeText(t, "pgxn.log", text, 20)
	if r := rankOf(rep, "", 14); r == 0 || r > 3 {
		t.Errorf("the added ERROR line of the output diff ranks %d, want the top 3", r)
	}
	if why, ok := reasonOf(rep, 14); !ok || !strings.Contains(why, "instead of the expected output") {
		t.Errorf("reason %q", why)
	}
	if why, ok := reasonOf(rep, 6); ok && !strings.Contains(why, "a line of the diff") {
		t.Errorf("the formatter's code line is evidence for %q", why)
	}
}

// TestWarningsMadeErrors: a run failed for its warnings ("Aborted with 1
// warnings in strict mode!") names no cause; the warnings just before the
// verdict are it, the nearest most, and a warning far before is not.
func TestWarningsMadeErrors(t *testing.T) {
	for s, want := range map[string]bool{
		"Aborted with 1 warnings in strict mode!":    true,
		"error: Aborting due to Kconfig warnings":    true,
		"cc1: all warnings being treated as errors":  true,
		"Build failed with 2 errors and 3 warnings":  false,
		"Finished with 3 warnings":                   false,
		"ERROR: failed to fetch index, see warnings": false,
	} {
		if got := warnVerdict(s); got != want {
			t.Errorf("warnVerdict(%q) = %v", s, got)
		}
	}
	lines := []string{"INFO    -  Cleaning site directory",
		"WARNING -  A reference to 'old/page.md' is included in the nav but not found"}
	for i := 0; i < 60; i++ {
		lines = append(lines, fmt.Sprintf("INFO    -  Rendered page %d of the site", i))
	}
	lines = append(lines,
		"ERROR   -  Error reading page 'api.md': retrying after a lock timeout",
		"INFO    -  Page 'api.md' read on the second try",
		"WARNING -  griffe: src/x/client.py:142: Parameter 'retries' does not appear in the function signature",
		"INFO    -  Documentation built in 1.21 seconds",
		"Aborted with 1 warnings in strict mode!")
	rep := analyzeText(t, "mkdocs.log", strings.Join(lines, "\n")+"\n", 20)
	verdict, cause := len(lines), len(lines)-2
	// (below the verdict and an error that was retried, above the
	// earlier warning)
	if r := rankOf(rep, "", cause); r == 0 || r > 3 {
		t.Errorf("the warning before the verdict ranks %d, want the top 3", r)
	}
	if why, _ := reasonOf(rep, cause); !strings.Contains(why, fmt.Sprintf("a warning the run failed for at L%d", verdict)) {
		t.Errorf("reason %q", why)
	}
	if why, _ := reasonOf(rep, 2); strings.Contains(why, "the run failed for") {
		t.Errorf("a warning %d lines before the verdict: %q", verdict-2, why)
	}
}

// TestExceptionAtInfo: an exception is an error whatever level a wrapper
// logged it at, .NET's with its native code or HRESULT too; a line that
// only mentions one stays info.
func TestExceptionAtInfo(t *testing.T) {
	for s, want := range map[string]bool{
		"Microsoft.Data.SqlClient.SqlException (0x80131904): Execution Timeout Expired.": true,
		"System.ComponentModel.Win32Exception (258): The wait operation timed out.":      true,
		"java.lang.IllegalStateException: pool closed":                                   true,
		"SqlException (see below) was retried":                                           false,
		"Connection (pool-1): closed":                                                    false,
	} {
		if got := exceptionLine(s); got != want {
			t.Errorf("exceptionLine(%q) = %v", s, got)
		}
	}
	var lines []string
	for i := 0; i < 20; i++ {
		lines = append(lines, fmt.Sprintf("22:03:%02d   Info     |       Executing script %d of the migration", i, i))
	}
	lines = append(lines,
		"22:03:38   Info     |       Microsoft.Data.SqlClient.SqlException (0x80131904): Execution Timeout Expired.",
		"22:03:39   Info     |       Retrying after a SqlException was logged above",
		"22:03:40   Info     |       Done")
	rep := analyzeText(t, "octopus.log", strings.Join(lines, "\n")+"\n", 10)
	if why, ok := reasonOf(rep, 21); !ok || !strings.HasPrefix(why, "error") {
		t.Errorf("the exception logged at Info: %q, %v", why, ok)
	}
	if why, ok := reasonOf(rep, 22); ok && strings.HasPrefix(why, "error") {
		t.Errorf("a line mentioning an exception is an error: %q", why)
	}
}

// TestWrappedLevels: the Java Service Wrapper prints every line of the JVM
// under its own INFO; the logger's level inside ("E [Timer]") is the
// line's. A log of such lines has errors, and evidence.
func TestWrappedLevels(t *testing.T) {
	for s, want := range map[string]uint8{
		"E [Project[MES].gateway.timer] Error executing script": lvError,
		"W [c.i.LicenseManager] [06:04:57.824]: not valid":      lvWarn,
		"ERROR [main] pool closed":                              lvError,
		"[WARN] disk at 91%":                                    lvWarn,
		"FATAL: cannot start":                                   lvFatal,
		"I [Gateway] started":                                   lvNone,
		"E2E suite started":                                     lvNone,
		"ERRORS were counted":                                   lvNone,
		"connection from 10.0.0.7 accepted":                     lvNone,
	} {
		if got := leadingLevel(s); got != want {
			t.Errorf("leadingLevel(%q) = %d, want %d", s, got, want)
		}
		if got := wrappedLevel("jvm 1    | 2024/06/03 06:15:00 | " + s); got != want {
			t.Errorf("wrappedLevel(… | %q) = %d, want %d", s, got, want)
		}
	}
	var lines []string
	for i := 0; i < 30; i++ {
		lines = append(lines, fmt.Sprintf("INFO   | jvm 1    | 2024/06/03 06:%02d:00 | I [Gateway] [06:%02d:00.100]: Tag group %d executed", i, i, i))
	}
	lines = append(lines, "INFO   | jvm 1    | 2024/06/03 06:31:00 | E [Timer.ShiftOEE] [06:31:00.286]: Script failed: division by zero")
	rep := analyzeText(t, "wrapper.log", strings.Join(lines, "\n")+"\n", 5)
	if rep.Levels["error"] != 1 {
		t.Errorf("levels %v, want the one error", rep.Levels)
	}
	if r := rankOf(rep, "", 31); r != 1 {
		t.Errorf("the logger's error ranks %d", r)
	}
}

// TestIndentedTraceback: Nextflow reports a failed process's stderr
// indented under "Command error:"; the Python traceback's exception line
// there is the event's root, above the warnings printed before it.
func TestIndentedTraceback(t *testing.T) {
	text := strings.Join([]string{
		"[13/fa3289] Submitted process > MERGE_COUNTS (salmon)",
		"ERROR ~ Error executing process > 'MERGE_COUNTS (salmon)'",
		"",
		"Command error:",
		"  /usr/lib/python3.12/site-packages/pandas/core/reshape/merge.py:1203: FutureWarning: Passing 'suffixes' which cause duplicate columns",
		"    warnings.warn(",
		"  Traceback (most recent call last):",
		"    File \"/w/bin/merge_counts.py\", line 48, in main",
		"      merged = merged.append(counts, ignore_index=True)",
		"  AttributeError: 'DataFrame' object has no attribute 'append'. Did you mean: '_append'?",
		"",
		"Work dir:",
		"  /w/work/13/fa32899e1d0c",
	}, "\n") + "\n"
	rep := analyzeText(t, "nextflow.log", text, 10)
	why, ok := reasonOf(rep, 10)
	if !ok || !strings.Contains(why, "exception ending the trace") {
		t.Errorf("the traceback's exception: %q, %v", why, ok)
	}
	if r, w := rankOf(rep, "", 10), rankOf(rep, "", 5); w > 0 && w < r {
		t.Errorf("the FutureWarning ranks %d, above the exception at %d", w, r)
	}
}

// TestBitbucketSteps: Bitbucket Pipelines echoes each command with "+ ",
// collects test reports after the script and then runs the after-script;
// it reports no exit status, but a step with caches says it failed. The
// command that failed is the script's last, whether or not that is said.
func TestBitbucketSteps(t *testing.T) {
	lines := []string{
		1:  "+ npm ci",
		2:  "npm WARN deprecated inflight@1.0.6",
		3:  "+ sf project deploy validate --manifest manifest/package.xml",
		4:  "Warning: Average test coverage is 72%, at least 75% test coverage is required.",
		5:  "Error (1): Failed to validate the deployment.",
		6:  "Searching for test report files in directories named [test-results] down to a depth of 4",
		7:  "+ pipe: atlassian/slack-notify:2.2.0",
		8:  "✖ Failed to send notification to Slack. Status code: 404.",
		9:  "Skipping cache upload for failed step",
		10: "",
	}
	errs := map[int]bool{5: true, 8: true}
	for _, verdict := range []bool{true, false} {
		var st stepTrack
		for no, l := range lines {
			if no == 9 && !verdict {
				continue
			}
			if l != "" && stepLine(l) != stepNone {
				st.line(l, no)
			}
			if errs[no] {
				st.lastErr = no
			}
		}
		st.close(10, 8)
		if got, want := fmt.Sprint(st.failed), "[[3 5]]"; got != want {
			t.Errorf("verdict %v: failed regions %s, want %s", verdict, got, want)
		}
		want := "[[6 10]]"
		if verdict {
			want = "[[6 9]]"
		}
		if got := fmt.Sprint(st.runner); got != want {
			t.Errorf("verdict %v: runner stages %s, want %s", verdict, got, want)
		}
	}
}

// TestWebLogicRecords: in a WebLogic log every record starts with
// "####<", so the further lines of a multi-line message (an ORA- error,
// the closing ">") and its stack trace carry the record's template, and
// the record's severity and time come from its fields.
func TestWebLogicRecords(t *testing.T) {
	var b strings.Builder
	rec := func(sec int, sev, sub, id, msg string) {
		fmt.Fprintf(&b, "####<Jun 3, 2024, 2:%02d:%02d,263 AM UTC> <%s> <%s> <host1> <ms1> <[ACTIVE] ExecuteThread: '8' for queue: 'weblogic.kernel.Default (self-tuning)'> <<WLS Kernel>> <> <a91c7e34-%04d> <%d> <[severity-value: 16] [rid: 0] > <%s> <%s\n",
			sec/60, sec%60, sev, sub, sec, 1717380000000+int64(sec)*1000, id, msg)
	}
	for i := range 30 {
		rec(i*10, "Info", "Health", "BEA-310002", fmt.Sprintf("%d%% of the total memory in the server is free.>", 40+i%7))
	}
	rec(400, "Warning", "JDBC", "BEA-001129", "Received exception while creating connection for pool \"OrdersDS\": Listener refused the connection with the following error:")
	b.WriteString("ORA-12514, TNS:listener does not currently know of service requested in connect descriptor\n >\n")
	for i := range 5 {
		rec(410+i, "Error", "HTTP", "BEA-101020", "Servlet failed with an Exception")
		b.WriteString("java.sql.SQLException: Pool OrdersDS is Suspended\n\tat weblogic.jdbc.Pool.get(Pool.java:88)\n>\n")
	}
	path := writeFile(t, "wls.log", []byte(b.String()))
	ids := map[int]string{}
	err := Templates(context.Background(), path, Options{}, func(tl TemplateLine) error {
		ids[tl.Line] = tl.TemplateID
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ids[32] != ids[31] || ids[33] != ids[31] || ids[35] != ids[34] || ids[37] != ids[34] {
		t.Errorf("a record's further lines do not carry its template: %v", ids)
	}
	rep := analyzeText(t, "wls.log", b.String(), 5)
	if rep.Levels["error"] != 5 || rep.Levels["warn"] != 1 {
		t.Errorf("levels %v, want the 5 errors and the warning from the records' severity", rep.Levels)
	}
	if rep.TimeRange == nil || !strings.HasPrefix(rep.TimeRange.Start, "Jun 3, 2024, 2:00:00") {
		t.Errorf("time range %+v, want the first record's time", rep.TimeRange)
	}
}

// TestIndentedFrame: the cheap test detectLevel skips stack frames with.
func TestIndentedFrame(t *testing.T) {
	for in, want := range map[string]bool{
		"\tat c.e.api.OrderController.post(OrderController.java:41)": true,
		"    at System.IO.File.Open(String path)":                    true,
		"\t... 12 more":                             true,
		"at c.e.Foo.bar(Foo.java:1)":                false, // not indented: a message
		"\tat the end ERROR disk full":              false,
		"    ERROR: at least one (1) check failed)": false,
	} {
		if got := indentedFrame(in); got != want {
			t.Errorf("indentedFrame(%q) = %v, want %v", in, got, want)
		}
	}
}
