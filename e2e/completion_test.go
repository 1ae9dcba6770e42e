package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBashCompletionAliases loads `ibtool completion bash` in a real bash
// and completes a tool name that PATH resolves to ibtool and one that it
// resolves to another program (infiniband-diags' perfquery, beside
// ibtool's package): the first completes through ibtool, the second is
// never run (asking infiniband-diags' tools for completions would run them).
func TestBashCompletionAliases(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	for _, name := range []string{"ibtool", "ibstat"} {
		if err := os.Symlink(ibtoolBin, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	other := "#!/bin/sh\ntouch " + marker + "\n"
	if err := os.WriteFile(filepath.Join(dir, "perfquery"), []byte(other), 0o755); err != nil {
		t.Fatal(err)
	}
	// complete WORDS: what the function registered for WORDS[0] puts in
	// COMPREPLY for the last word, one per line.
	script := `source /usr/share/bash-completion/bash_completion || exit 99
source <(ibtool completion bash) || exit 100
complete_words() {
	COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
	fn=$(complete -p "$1" | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
	[ -n "$fn" ] || { echo "no completion for $1" >&2; exit 101; }
	"$fn" "$1" "${@: -1}" "${COMP_WORDS[COMP_CWORD-1]}"
	printf '%s\n' "${COMPREPLY[@]}"
}
complete_words "$@"
`
	run := func(words ...string) string {
		t.Helper()
		cmd := exec.Command("bash", append([]string{"-c", script, "bash"}, words...)...)
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("completing %q: %v\n%s", words, err, out)
		}
		return string(out)
	}
	if got := run("ibstat", "--ver"); !strings.Contains(got, "--verbose") {
		t.Errorf("ibstat --ver completes to %q, want --verbose among them", got)
	}
	if got := run("perfquery", "--ver"); strings.TrimSpace(got) != "" {
		t.Errorf("another program's perfquery completes to %q, want nothing", got)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("completing another program's perfquery ran it")
	}
}
