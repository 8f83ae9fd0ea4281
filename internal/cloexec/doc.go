// Package cloexec keeps a process's inherited file descriptors from
// reaching the programs it starts.
//
// Go opens every descriptor of its own with close-on-exec, and os/exec
// passes a child only what Stdin, Stdout, Stderr and ExtraFiles name. A
// descriptor the process inherited without close-on-exec (from the shell
// or service manager that started it) is the exception: every program it
// starts inherits it too, and so on down. Mark flags every descriptor
// above standard error close-on-exec, once, before such a start.
package cloexec
