//go:build !unix

package skills

import "os/exec"

func setProcessGroup(cmd *exec.Cmd) {}
