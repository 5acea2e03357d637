package logscan

import (
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
}
