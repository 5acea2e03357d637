//go:build unix

package skills

import (
	"os/exec"
	"syscall"
)

// setProcessGroup runs the program in its own process group and kills the
// whole group on cancel, so a skill's children die with it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
