// Command startbench times short commands for make bench's start-up rows:
// each command runs -runs times, the commands in turn (so a busy moment
// of the machine hits them all), and each row prints the medians of wall
// time, CPU time (user and system, from wait4's rusage) and minor page
// faults (rusage's, the figure /usr/bin/time -v prints), and the ratios to
// the row's reference.
//
// Usage:
//
//	startbench [-runs N] [-dir DIR] ROW...
//	startbench -probe
//
// A ROW is "LABEL|REFERENCE|COMMAND": LABEL names the row, REFERENCE is
// the command COMMAND is compared to (its wall and CPU divided by
// COMMAND's: above 1 is COMMAND faster). A command is words split at
// spaces; leading NAME=VALUE words are added to its environment.
//
// -probe prints what this machine charges for the first write to a page
// of fresh memory and for a system call (medians of 9 rounds), the two
// costs that most separate a Go program's start from a C program's: a
// virtual machine whose hypervisor keeps shadow page tables charges
// several microseconds a page where a bare machine charges a fraction of
// one, and the start-up ratios of two machines are only comparable
// beside these figures.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

type sample struct{ wall, cpu, faults float64 }

type command struct {
	words []string
	env   []string
	runs  []sample
}

func parse(s string) *command {
	c := &command{}
	for _, w := range strings.Fields(s) {
		if len(c.words) == 0 && strings.Contains(w, "=") {
			c.env = append(c.env, w)
			continue
		}
		c.words = append(c.words, w)
	}
	return c
}

func (c *command) run(dir string) error {
	cmd := exec.Command(c.words[0], c.words[1:]...)
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Dir = dir
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return fmt.Errorf("%s: %v", strings.Join(c.words, " "), err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	c.runs = append(c.runs, sample{wall.Seconds() * 1e3, cpu.Seconds() * 1e3, float64(ru.Minflt)})
	return nil
}

func median(c *command, f func(sample) float64) float64 {
	v := make([]float64, len(c.runs))
	for i, s := range c.runs {
		v[i] = f(s)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

func main() {
	runs := flag.Int("runs", 21, "runs of each command")
	dir := flag.String("dir", "", "working directory of the commands")
	probe := flag.Bool("probe", false, "print the machine's cost of a page's first write and of a system call, and exit")
	flag.Parse()
	if *probe {
		m, err := probeMachine(9, 20000)
		if err != nil {
			fmt.Fprintln(os.Stderr, "startbench:", err)
			os.Exit(1)
		}
		fmt.Println("machine:", m)
		return
	}
	type row struct {
		label    string
		ref, cmd *command
	}
	var rows []row
	byText := map[string]*command{}
	get := func(s string) *command {
		if c, ok := byText[s]; ok {
			return c
		}
		c := parse(s)
		byText[s] = c
		return c
	}
	var order []*command
	for _, a := range flag.Args() {
		parts := strings.SplitN(a, "|", 3)
		if len(parts) != 3 {
			fmt.Fprintf(os.Stderr, "startbench: row %q: want LABEL|REFERENCE|COMMAND\n", a)
			os.Exit(2)
		}
		r := row{parts[0], get(parts[1]), get(parts[2])}
		for _, c := range []*command{r.ref, r.cmd} {
			if !slices.Contains(order, c) {
				order = append(order, c)
			}
		}
		rows = append(rows, r)
	}
	for range *runs {
		for _, c := range order {
			if err := c.run(*dir); err != nil {
				fmt.Fprintln(os.Stderr, "startbench:", err)
				os.Exit(1)
			}
		}
	}
	wall := func(s sample) float64 { return s.wall }
	cpu := func(s sample) float64 { return s.cpu }
	faults := func(s sample) float64 { return s.faults }
	fmt.Printf("%-34s %21s %21s %8s %8s\n", "", "reference", "this", "", "")
	fmt.Printf("%-34s %7s %6s %6s %7s %6s %6s %8s %8s\n", "command", "wall", "cpu", "faults", "wall", "cpu", "faults", "wall x", "cpu x")
	for _, r := range rows {
		rw, rc, ow, oc := median(r.ref, wall), median(r.ref, cpu), median(r.cmd, wall), median(r.cmd, cpu)
		fmt.Printf("%-34s %5.2fms %4.1fms %6.0f %5.2fms %4.1fms %6.0f %7.2fx %7.2fx\n", r.label,
			rw, rc, median(r.ref, faults), ow, oc, median(r.cmd, faults), rw/ow, rc/oc)
	}
}
