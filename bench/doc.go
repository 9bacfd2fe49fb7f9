// Package bench holds ptyactor's benchmarks. Each ptyactor benchmark is
// paired with a raw baseline measured in the same run: a bare creack/pty
// loop driving bash with a unique PS1, reading until it reappears (the
// physical floor). Compare ratios, not absolute figures.
package bench
