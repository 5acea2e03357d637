//go:build unix

package jobs

import (
	"os"
	"syscall"
)

// inode returns the file's inode number, to notice a rotated file.
func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
