package eval

import (
	"embed"
	"io/fs"
	"regexp"
)

//go:embed tasks
var shipped embed.FS

// Shipped returns the task set that ships with sleuth (the tasks folder
// beside this file), so `sleuth eval` works from any directory.
func Shipped() fs.FS {
	sub, err := fs.Sub(shipped, "tasks")
	if err != nil {
		panic(err) // the embedded folder always exists
	}
	return sub
}

// Filter keeps the tasks whose name matches re; nil keeps all.
func Filter(tasks []Task, re *regexp.Regexp) []Task {
	if re == nil {
		return tasks
	}
	var out []Task
	for _, t := range tasks {
		if re.MatchString(t.Name) {
			out = append(out, t)
		}
	}
	return out
}
