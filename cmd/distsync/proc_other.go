//go:build !unix

package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
)

// Without Unix process groups, run starts COMMAND directly: signals and the
// lost lease's stop reach COMMAND only, not its children, and COMMAND
// outlives a distsync that is killed.

const guardCommand = "__guard"

var forwarded = []os.Signal{os.Interrupt}

var jobControl []os.Signal

func stopping(os.Signal) bool { return true }

func isSuspend(os.Signal) bool { return false }

func isContinue(os.Signal) bool { return false }

type group struct {
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
}

func startGroup(path string, argv, env []string, stdin io.Reader, stdout, stderr io.Writer) (*group, error) {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &group{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *group) pid() int { return p.cmd.Process.Pid }

func (p *group) signal(s os.Signal) {
	if p.cmd.Process.Signal(s) != nil {
		p.kill()
	}
}

func (p *group) kill() { _ = p.cmd.Process.Kill() }

func (p *group) suspend() {}

func (p *group) resume() {}

func (p *group) resumeJob() {}

func (p *group) exited() <-chan struct{} { return p.done }

func (p *group) status() int { return exitStatus(p.waitErr) }

func (p *group) close() {
	select {
	case <-p.done:
	default:
		p.kill()
	}
}

func guardMain([]string) int {
	fmt.Fprintln(os.Stderr, "distsync: "+guardCommand+" is internal to distsync run")
	return exitUsage
}
